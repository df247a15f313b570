"""plan --against-release's verdict on a tenant's plan: none, re-apply, roll (a worker or a version moves)."""

from __future__ import annotations

import pytest

from tenantctl.operator.daytwo.plan import Action, Change, TenantPlan
from tenantctl.operator.daytwo.release_plan import ReleasePlan, Verdict, judge, render_release_text


def _plan(*changes: Change, upgrade: tuple[str, ...] = ()) -> TenantPlan:
    return TenantPlan("tenant-acme", "acme", list(changes), spec_unchanged=True, upgrade=list(upgrade))


NOOP = Change(Action.NOOP, "Cluster", "acme")


def test_nothing_written_is_none() -> None:
    assert judge(_plan(NOOP)) == (Verdict.NONE, [])


@pytest.mark.parametrize("change", [
    Change(Action.UPDATE, "HelmRelease", "acme-cilium", ("~ spec.values.image: a -> b",)),
    Change(Action.UPDATE, "MachineDeployment", "acme-md0", ("+ metadata.annotations.x: y",)),
    Change(Action.UPDATE, "KamajiControlPlane", "acme", ("~ spec.addons.coreDNS: a -> b",)),
    Change(Action.CREATE, "HelmRepository", "tenantctl-metrics-server"),
])
def test_a_change_in_place_is_a_re_apply(change: Change) -> None:
    verdict, why = judge(_plan(NOOP, change))
    assert verdict is Verdict.REAPPLY and why == [f"{change.action.value} {change.ref}"]


@pytest.mark.parametrize("change", [
    Change(Action.ROTATE, "ProxmoxMachineTemplate", "acme-md0-e6fbdefd", note="pool md0: 3 worker(s) replaced"),
    Change(Action.UPDATE, "MachineDeployment", "acme-md0", ("~ spec.template.spec.version: v1.33.8 -> v1.33.13",)),
    Change(Action.UPDATE, "KamajiControlPlane", "acme", ("~ spec.version: v1.33.8 -> v1.33.13",)),
])
def test_a_worker_replaced_or_a_version_moved_is_a_roll(change: Change) -> None:
    verdict, why = judge(_plan(NOOP, change))
    assert verdict is Verdict.ROLL and len(why) == 1 and change.ref in why[0]


def test_an_upgrade_stage_is_a_roll() -> None:
    assert judge(_plan(NOOP, upgrade=("1. control plane acme: v1.33.8 -> v1.33.13",)))[0] is Verdict.ROLL


def test_the_text_names_each_tenant_its_verdict_and_what_waits() -> None:
    plans = [ReleasePlan("tenant-acme", "acme", Verdict.REAPPLY, ["update in place HelmRelease/acme-cilium"],
                         {"kubernetes": "v1.33.13", "reason": "patch policy Manual", "render": ["pool md0 keeps"]}),
             ReleasePlan("tenant-demo", "demo", Verdict.REFUSED, ["NodePool/md0.spec.x: bad"])]
    text = render_release_text(plans)
    assert "TenantCluster tenant-acme/acme: re-apply" in text and "pending patch v1.33.13: patch policy Manual" in text
    assert "pending: pool md0 keeps" in text and "TenantCluster tenant-demo/demo: refused" in text
    assert render_release_text([]) == "no TenantCluster in the management cluster\n"
