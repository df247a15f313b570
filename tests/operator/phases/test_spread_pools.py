"""A spread pool is several MachineDeployments: the upgrade reads them as one pool, rolled out only when all are."""

from __future__ import annotations

from typing import Any

from tenantctl.operator.phases.upgrade import Versions, live_state

POOL = "tenantctl.io/nodepool"


def _md(name: str, version: str, replicas: int, updated: int, talos: str = "v1.13.6") -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {POOL: "md0"}, "generation": 2,
                     "annotations": {"tenantctl.io/talos-version": talos}},
        "spec": {"replicas": replicas, "template": {"spec": {"version": version}}},
        "status": {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": updated,
                   "availableReplicas": updated},
    }


def _mhc(name: str, expected: int, healthy: int) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {POOL: "md0"}},
            "status": {"expectedMachines": expected, "currentHealthy": healthy}}


def test_the_groups_add_up_and_the_pool_runs_the_oldest_version_any_group_runs() -> None:
    mds = [_md("acme-md0-pve1", "v1.34.2", 2, 2), _md("acme-md0-pve2", "v1.33.13", 2, 0),
           _md("acme-md0-pve3", "v1.34.2", 1, 1)]
    state = live_state(None, mds, [], "v1.13.6").pools["md0"]
    assert state.running == Versions("v1.33.13", "v1.13.6")
    assert (state.replicas, state.updated, state.available) == (5, 3, 3)
    assert not state.rolled_out


def test_a_spread_pool_has_rolled_out_only_when_every_group_has() -> None:
    mds = [_md("acme-md0-pve1", "v1.34.2", 2, 2), _md("acme-md0-pve2", "v1.34.2", 1, 1)]
    assert live_state(None, mds, [], "v1.13.6").pools["md0"].rolled_out
    mds[1]["metadata"]["generation"] = 3
    assert not live_state(None, mds, [], "v1.13.6").pools["md0"].rolled_out


def test_each_groups_health_check_is_matched_by_name_and_any_remediation_holds_the_pool() -> None:
    mds = [_md("acme-md0-pve1", "v1.34.2", 2, 2), _md("acme-md0-pve2", "v1.34.2", 2, 2)]
    checks = [_mhc("acme-md0-pve1", 2, 2), _mhc("acme-md0-pve2", 2, 1)]
    state = live_state(None, mds, checks, "v1.13.6").pools["md0"]
    assert state.remediating == "its MachineHealthCheck sees 1/2 machines healthy"
    healthy = live_state(None, mds, [_mhc("acme-md0-pve1", 2, 2), _mhc("acme-md0-pve2", 2, 2)], "v1.13.6")
    assert healthy.pools["md0"].remediating is None


def test_a_talos_version_behind_in_one_group_is_the_pools() -> None:
    mds = [_md("acme-md0-pve1", "v1.34.2", 1, 1, talos="v1.13.6"),
           _md("acme-md0-pve2", "v1.34.2", 1, 1, talos="v1.12.4")]
    assert live_state(None, mds, [], "v1.13.6").pools["md0"].running == Versions("v1.34.2", "v1.12.4")


def test_an_unsplit_pool_reads_as_before() -> None:
    md = _md("acme-md0", "v1.34.2", 3, 3)
    state = live_state(None, [md], [_mhc("acme-md0", 3, 3)], "v1.13.6").pools["md0"]
    assert (state.replicas, state.running, state.remediating) == (3, Versions("v1.34.2", "v1.13.6"), None)
