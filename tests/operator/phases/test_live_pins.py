"""A live pool keeps the machine template an earlier release rendered, until the spec changes its machines.

The live MachineDeployment is the one a21db75 rendered (from the compatibility corpus): before the
owner tags. Today's render would name another template; `keep_live_templates` renders the pool at the
level whose template is the live one, unless the spec asks for a roll of its own.
"""

from __future__ import annotations

import copy
import datetime
from collections.abc import Sequence
from typing import Any

import yaml

from compat.corpus import renders
from tenantctl.operator.phases.live_pins import effective_version, keep_live_templates, template_refs
from tenantctl.render import render_cluster
from tenantctl.render.levels import CURRENT_LEVEL, LEVELS, pool_at_level
from tenantctl.spec import NodePool, TenantCluster, parse_observed, parse_tenant_documents
from tenantctl.spec.patch_policy import PatchUpgrades, PatchWindow

RENDER = next(r for r in renders() if r.release == "a21db75" and r.source == "examples/proxmox.yaml"
              and r.observed is not None)
LIVE = [o for o in RENDER.objects() if o["kind"] == "MachineDeployment"]
NOW = datetime.datetime(2026, 12, 2, 3, 0, tzinfo=datetime.UTC)


def _spec(edit: Any = None) -> tuple[TenantCluster, tuple[NodePool, ...]]:
    docs = [d for d in yaml.safe_load_all(RENDER.spec_path().read_text()) if d]
    if edit is not None:
        edit(docs)
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    running = LIVE[0]["spec"]["template"]["spec"]["version"]
    cluster, _ = effective_version(cluster, running, None, NOW)
    return cluster, tenant.pools_of(cluster)


def _kept(cluster: TenantCluster, pools: Sequence[NodePool]) -> Any:
    observed_path = RENDER.observed_path()
    assert observed_path is not None
    observed = next(iter(parse_observed([d for d in yaml.safe_load_all(observed_path.read_text()) if d]).values()))

    def render_pool(_: str, at_level: Sequence[NodePool]) -> list[dict[str, Any]]:
        return render_cluster(cluster, at_level, observed)

    return keep_live_templates(pools, render_cluster(cluster, pools, observed), LIVE, render_pool)


def _mds(objects: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    return [template_refs(o) for o in objects if o["kind"] == "MachineDeployment"]


def test_an_unchanged_pool_keeps_the_template_its_release_rendered_and_says_what_waits() -> None:
    kept = _kept(*_spec())
    assert _mds(kept.objects) == [template_refs(md) for md in LIVE]
    live_template = LIVE[0]["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    template = next(o for o in kept.objects if o["kind"] == "ProxmoxMachineTemplate")
    assert template["metadata"]["name"] == live_template
    (waiting,) = kept.waiting
    assert "pool md0" in waiting and "owner tags" in waiting and "3c5c6f1" in waiting


def test_a_pool_whose_machines_change_rolls_once_with_every_change() -> None:
    def more_memory(docs: list[dict[str, Any]]) -> None:
        pool = next(d for d in docs if d["kind"] == "NodePool")
        pool["spec"]["resources"]["memory"] = "12Gi"

    kept = _kept(*_spec(more_memory))
    assert kept.waiting == ()
    template = next(o for o in kept.objects if o["kind"] == "ProxmoxMachineTemplate")
    assert "tenantctl" in template["spec"]["template"]["spec"]["tags"], "the owner tags ride with the roll"


def test_a_pool_taking_a_new_patch_rolls_with_every_change() -> None:
    nightly = PatchUpgrades(policy="Automatic", window=PatchWindow(start="02:00", duration="2h"))

    def automatic(docs: list[dict[str, Any]]) -> None:
        docs[0]["spec"]["patchUpgrades"] = nightly.model_dump(by_alias=True)

    cluster, pools = _spec(automatic)
    assert _mds(_kept(cluster, pools).objects) != [template_refs(md) for md in LIVE]
    assert _kept(cluster, pools).waiting == ()


def test_a_pool_rendered_by_this_release_is_left_as_rendered() -> None:
    cluster, pools = _spec()
    current = render_cluster(cluster, pools, None)
    kept = keep_live_templates(pools, current, [o for o in current if o["kind"] == "MachineDeployment"],
                               lambda _, at: render_cluster(cluster, at, None))
    assert kept.objects == current and kept.waiting == ()


def test_each_level_turns_off_only_its_own_change() -> None:
    _, pools = _spec()
    pool = pools[0]
    assert pool_at_level(pool, CURRENT_LEVEL) == pool
    assert pool.spec.proxmox is not None and pool.spec.proxmox.owner_tags
    below = pool_at_level(pool, CURRENT_LEVEL - 1)
    assert below.spec.proxmox is not None and not below.spec.proxmox.owner_tags
    assert below.model_copy(update={"spec": below.spec.model_copy(update={"proxmox": pool.spec.proxmox})}) == pool
    assert [row.level for row in LEVELS] == list(range(1, CURRENT_LEVEL + 1))
    assert copy.deepcopy(pool) == pool, "the pool itself is left alone"
