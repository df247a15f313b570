"""An upgrade in the order Kamaji and the skew policy allow: the control plane, then one pool at a time.

The real kopf engine on the emulated management API; the test plays Kamaji and CAPI by writing the
statuses they would write, and reads the order of the operator's writes from the request journal.
"""

from __future__ import annotations

import datetime
from typing import Any

import pytest
from daytwo_support import PLURALS, set_status
from kube_emulator import KubeEmulator
from operator_support import condition, eventually, one_more_pass, quiet, running_operator
from test_apply import KUBEVIRT, TC, seeded

from tenantctl.operator.phases.upgrade import LiveState, PoolState, Stage, Versions, decide

pytestmark = [pytest.mark.timeout(30), pytest.mark.looptime]

KCP = "controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes"
MD = "cluster.x-k8s.io/v1beta1/machinedeployments"
NS, NAME = KUBEVIRT


def _status(mgmt: KubeEmulator, kind: str, name: str, status: dict[str, Any]) -> None:
    set_status(mgmt, kind, name, status, NS)


def control_plane_reports(mgmt: KubeEmulator, version: str, ready: bool = True) -> None:
    _status(mgmt, "KamajiControlPlane", NAME, {"version": version, "ready": ready, "readyReplicas": 2, "replicas": 2})


def rolled_out(mgmt: KubeEmulator, md: str, replicas: int = 1) -> None:
    """What CAPI reports once every machine of the MachineDeployment's latest spec is up."""
    obj = mgmt.get(MD, NS, md)
    assert obj is not None
    n = obj["spec"].get("replicas", replicas)
    _status(mgmt, "MachineDeployment", md, {"observedGeneration": obj["metadata"]["generation"], "replicas": n,
                           "updatedReplicas": n, "readyReplicas": n, "availableReplicas": n})


def rolling(mgmt: KubeEmulator, md: str) -> None:
    obj = mgmt.get(MD, NS, md)
    assert obj is not None
    n = obj["spec"].get("replicas", 1)
    _status(mgmt, "MachineDeployment", md, {"observedGeneration": obj["metadata"]["generation"], "replicas": n + 1,
                           "updatedReplicas": 0, "readyReplicas": n, "availableReplicas": n})


def md_version(mgmt: KubeEmulator, md: str) -> str:
    obj = mgmt.get(MD, NS, md)
    assert obj is not None
    return str(obj["spec"]["template"]["spec"]["version"])


def kcp_version(mgmt: KubeEmulator) -> str:
    obj = mgmt.get(KCP, NS, NAME)
    assert obj is not None
    return str(obj["spec"]["version"])


def change_version(mgmt: KubeEmulator, version: str) -> None:
    tc = mgmt.get(TC, NS, NAME)
    assert tc is not None
    tc["spec"]["version"] = version
    tc["metadata"]["generation"] += 1
    mgmt.put(TC, tc)


def seeded_at_v134(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant, "kubevirt.yaml")
    change_version(mgmt, "v1.34")  # before the operator runs: a tenant created at v1.34


def writes_of(mgmt: KubeEmulator, plural: str, name: str, since: int) -> list[int]:
    return [i for i, e in enumerate(mgmt.writes()) if i >= since and e.plural == plural and e.name == name
            and e.verb.startswith("apply")]


def upgrading(mgmt: KubeEmulator) -> dict[str, Any]:
    return dict(condition(mgmt.get(TC, NS, NAME), "Upgrading"))


async def converged_at_v134(mgmt: KubeEmulator, tenant: KubeEmulator, ctx: Any) -> None:
    await eventually(lambda: condition(mgmt.get(TC, NS, NAME), "Ready").get("status") == "True")
    control_plane_reports(mgmt, "v1.34.9")
    rolled_out(mgmt, "demo-big")
    rolled_out(mgmt, "demo-md0")
    await quiet(ctx, mgmt, KUBEVIRT)


async def test_the_control_plane_moves_first_then_each_pool_after_the_previous_rolled_out(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded_at_v134(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await converged_at_v134(mgmt, tenant, ctx)
        assert upgrading(mgmt)["status"] == "False" and upgrading(mgmt)["reason"] == "UpToDate"
        start = len(mgmt.writes())
        change_version(mgmt, "v1.35")
        await eventually(lambda: kcp_version(mgmt) == "v1.35.6")
        await one_more_pass(ctx, KUBEVIRT)
        await one_more_pass(ctx, KUBEVIRT)
        assert (md_version(mgmt, "demo-big"), md_version(mgmt, "demo-md0")) == ("v1.34.9", "v1.34.9")
        assert upgrading(mgmt)["reason"] == "UpgradingControlPlane"
        status = mgmt.get(TC, NS, NAME)["status"]  # type: ignore[index]
        assert status["upgrade"]["stage"] == "ControlPlane" and status["upgrade"]["remaining"] == ["big", "md0"]

        control_plane_reports(mgmt, "v1.35.6", ready=False)  # reported, not every apiserver ready yet
        await one_more_pass(ctx, KUBEVIRT)
        assert md_version(mgmt, "demo-big") == "v1.34.9"
        control_plane_reports(mgmt, "v1.35.6")
        await eventually(lambda: md_version(mgmt, "demo-big") == "v1.35.6")
        rolling(mgmt, "demo-big")
        await one_more_pass(ctx, KUBEVIRT)
        await one_more_pass(ctx, KUBEVIRT)
        assert md_version(mgmt, "demo-md0") == "v1.34.9", "the next pool waits for the previous rollout"
        assert upgrading(mgmt)["reason"] == "UpgradingPool"
        assert "pool big to finish its rollout" in upgrading(mgmt)["message"]
        stage = mgmt.get(TC, NS, NAME)["status"]["upgrade"]  # type: ignore[index]
        assert {k: v for k, v in stage.items() if k not in ("since", "target")} == {
            "stage": "Pool", "pool": "big", "remaining": ["md0"],
            "waiting": "pool big to finish its rollout (0/1 updated, 1/1 available)"}
        # RFC 3339 in UTC, as every Kubernetes timestamp: what `since` is read back from after a restart
        since = datetime.datetime.strptime(stage["since"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)
        assert abs((datetime.datetime.now(datetime.UTC) - since).total_seconds()) < 3600

        rolled_out(mgmt, "demo-big")
        await eventually(lambda: md_version(mgmt, "demo-md0") == "v1.35.6")
        rolled_out(mgmt, "demo-md0")
        await eventually(lambda: upgrading(mgmt).get("reason") == "UpToDate")
        status = mgmt.get(TC, NS, NAME)["status"]  # type: ignore[index]
        assert "upgrade" not in status
        assert status["versions"]["pools"] == {"big": {"kubernetes": "v1.35.6", "talos": "v1.13.6"},
                                               "md0": {"kubernetes": "v1.35.6", "talos": "v1.13.6"}}
    kcp = writes_of(mgmt, "kamajicontrolplanes", NAME, start)
    big = writes_of(mgmt, "machinedeployments", "demo-big", start)
    md0 = writes_of(mgmt, "machinedeployments", "demo-md0", start)
    assert kcp and big and md0
    assert kcp[0] < big[0] < md0[0], (kcp, big, md0)
    told = [(e["reason"], e["message"]) for e in mgmt.live("events")
            if e.get("involvedObject", {}).get("name") == NAME
            and e["reason"] in {"UpgradingControlPlane", "UpgradingPool", "UpToDate"}]
    assert [reason for reason, _ in told] == ["UpgradingControlPlane", "UpgradingPool", "UpgradingPool", "UpToDate"]
    assert [message for _, message in told[1:3]] == [
        "pool big to v1.35.6 / Talos v1.13.6; then: md0", "pool md0 to v1.35.6 / Talos v1.13.6; then: done"]


async def test_a_remediating_pool_stops_the_sequence_with_the_reason(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded_at_v134(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await converged_at_v134(mgmt, tenant, ctx)
        change_version(mgmt, "v1.35")
        await eventually(lambda: kcp_version(mgmt) == "v1.35.6")
        control_plane_reports(mgmt, "v1.35.6")
        await eventually(lambda: md_version(mgmt, "demo-big") == "v1.35.6")
        rolling(mgmt, "demo-big")
        _status(mgmt, "MachineHealthCheck", "demo-big", {"expectedMachines": 2, "currentHealthy": 1})
        await eventually(lambda: condition(mgmt.get(TC, NS, NAME), "Ready").get("reason") == "UpgradeStalled")
        ready = condition(mgmt.get(TC, NS, NAME), "Ready")
        assert ready["status"] == "False"
        assert ready["message"] == ("pool big is being remediated: its MachineHealthCheck sees 1/2 machines healthy; "
                                    "the pools after it wait")
        await one_more_pass(ctx, KUBEVIRT)
        assert md_version(mgmt, "demo-md0") == "v1.34.9", "never the next pool over an unhealthy one"


async def test_another_namespaces_remediating_namesake_does_not_stall_the_upgrade(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """MachineHealthChecks are read in the tenant's namespace: a tenant elsewhere with the same cluster
    and pool names, mid-remediation, is not this one."""
    seeded_at_v134(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await converged_at_v134(mgmt, tenant, ctx)
        ours = mgmt.get(PLURALS["MachineHealthCheck"], NS, "demo-big")
        assert ours is not None
        mgmt.put(PLURALS["MachineHealthCheck"], {
            **ours, "metadata": {**ours["metadata"], "namespace": "tenant-elsewhere", "uid": "elsewhere"},
            "status": {"expectedMachines": 2, "currentHealthy": 0}})
        change_version(mgmt, "v1.35")
        await eventually(lambda: kcp_version(mgmt) == "v1.35.6")
        control_plane_reports(mgmt, "v1.35.6")
        await eventually(lambda: md_version(mgmt, "demo-big") == "v1.35.6")
        rolling(mgmt, "demo-big")
        await one_more_pass(ctx, KUBEVIRT)
        await one_more_pass(ctx, KUBEVIRT)
        assert upgrading(mgmt)["reason"] == "UpgradingPool"
        assert condition(mgmt.get(TC, NS, NAME), "Ready").get("reason") != "UpgradeStalled"
        rolled_out(mgmt, "demo-big")
        await eventually(lambda: md_version(mgmt, "demo-md0") == "v1.35.6")


async def test_a_new_tenant_is_created_at_the_target_directly(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = seeded(mgmt, tenant, "kubevirt.yaml")
    assert docs[0]["spec"]["version"] == "v1.33"
    async with running_operator(mgmt):
        await eventually(lambda: mgmt.get(MD, NS, "demo-md0") is not None and mgmt.get(MD, NS, "demo-big") is not None)
        assert kcp_version(mgmt) == md_version(mgmt, "demo-md0") == md_version(mgmt, "demo-big") == "v1.33.13"
        assert "upgrade" not in (mgmt.get(TC, NS, NAME) or {}).get("status", {})


# -- the decision alone, on states the emulator tests do not reach --------------------------------------------

TARGET = Versions("v1.35.6", "v1.13.6")
OLD = Versions("v1.34.9", "v1.13.6")


def _pool(running: Versions, *, done: bool = True) -> PoolState:
    return PoolState(running, replicas=2, updated=2 if done else 0, available=2, settled=True)


def _live(pools: dict[str, PoolState], reported: str = "v1.35.6") -> LiveState:
    return LiveState("v1.35.6", reported, True, (2, 2), pools)


def test_a_talos_only_change_rolls_the_pools_in_name_order_and_leaves_the_control_plane() -> None:
    live = _live({"b": _pool(Versions("v1.35.6", "v1.12.9")), "a": _pool(Versions("v1.35.6", "v1.12.9"))})
    decision, _ = decide("v1.35", "v1.13.6", ["b", "a"], live, 60)
    assert (decision.stage, decision.pool, dict(decision.held)) == (Stage.POOL, "a", {"b": live.pools["b"].running})


def test_a_pool_added_during_the_control_plane_stage_joins_at_what_the_apiserver_runs() -> None:
    live = LiveState("v1.34.9", "v1.34.9", True, (2, 2), {"a": _pool(OLD)})
    decision, _ = decide("v1.35", "v1.13.6", ["a", "new"], live, 60)
    assert decision.stage is Stage.CONTROL_PLANE
    assert decision.held == {"a": OLD, "new": Versions("v1.34.9", "v1.13.6")}


def test_the_last_pool_keeps_the_stage_until_its_rollout_completes_and_a_scaling_pool_is_no_upgrade() -> None:
    previous = {"stage": "Pool", "pool": "a", "target": TARGET.as_status()}
    rolling_pool = _live({"a": _pool(TARGET, done=False)})
    assert decide("v1.35", "v1.13.6", ["a"], rolling_pool, 60, previous)[0].pool == "a"
    assert not decide("v1.35", "v1.13.6", ["a"], rolling_pool, 60, {})[0].upgrading
    assert not decide("v1.35", "v1.13.6", ["a"], _live({"a": _pool(TARGET)}), 60, previous)[0].upgrading


def test_a_rollout_past_the_bound_stops_the_sequence_and_the_bound_counts_from_the_stage_start() -> None:
    start = datetime.datetime(2026, 12, 1, 10, 0, tzinfo=datetime.UTC)
    live = _live({"a": _pool(TARGET, done=False), "b": _pool(OLD)})
    previous = {"stage": "Pool", "pool": "a", "target": TARGET.as_status(), "since": "2026-12-01T10:00:00Z"}
    within, since = decide("v1.35", "v1.13.6", ["a", "b"], live, 60, previous, start + datetime.timedelta(seconds=60))
    assert (within.stalled, since) == (None, start)
    past, _ = decide("v1.35", "v1.13.6", ["a", "b"], live, 60, previous, start + datetime.timedelta(seconds=61))
    assert past.stalled == ("pool a has not finished its rollout in 60s (0/2 updated, 2/2 available); "
                            "the pools after it wait")
    assert past.held == {"b": OLD}
    other_stage = {**previous, "pool": "b"}
    later = start + datetime.timedelta(hours=1)
    assert decide("v1.35", "v1.13.6", ["a", "b"], live, 60, other_stage, later)[0].stalled is None, "a new stage"


def _kamaji_deployment(image: str, name: str = "kamaji") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "kamaji-system"},
            "spec": {"template": {"spec": {"containers": [{"name": "manager", "image": image}]}}}}


def test_the_kamaji_release_is_read_from_its_controllers_image_tag_where_the_tag_is_one() -> None:
    from tenantctl.operator.phases.talos_api import kamaji_release_of

    observed = kamaji_release_of([_kamaji_deployment("ghcr.io/clastix/kamaji:26.6.5-edge@sha256:" + "a" * 64)])
    assert observed is not None and observed.release == "26.6.5-edge"
    assert observed.source.startswith("observed: Deployment kamaji-system/kamaji runs ghcr.io/clastix/kamaji:26.6.5")
    assert kamaji_release_of([_kamaji_deployment("registry:5000/clastix/kamaji:edge-25.12.4")]).release == (  # type: ignore[union-attr]
        "edge-25.12.4")
    assert kamaji_release_of([_kamaji_deployment("ghcr.io/cozystack/cozystack/kamaji:v1.6.0")]) is None, (
        "a site's own build names no Kamaji release: it is declared instead")
    assert kamaji_release_of([_kamaji_deployment("registry:5000/kamaji")]) is None


# -- the skew guards: no pool moves while the control plane has not fully reached the target ------------------

def test_pools_wait_while_any_apiserver_replica_is_not_ready() -> None:
    """Kamaji reports the new version as soon as one replica runs it; the others still serve the old one."""
    pools = {"a": _pool(OLD), "b": _pool(OLD)}
    for ready in (0, 1):
        live = LiveState("v1.35.6", "v1.35.6", True, (ready, 2), pools)
        in_stage = {"stage": "ControlPlane", "target": TARGET.as_status()}
        decision, _ = decide("v1.35", "v1.13.6", ["a", "b"], live, 60, in_stage)
        assert (decision.stage, dict(decision.held)) == (Stage.CONTROL_PLANE, {"a": OLD, "b": OLD}), ready
        assert f"{ready}/2 ready" in decision.waiting
    released, _ = decide("v1.35", "v1.13.6", ["a", "b"], LiveState("v1.35.6", "v1.35.6", True, (2, 2), pools), 60)
    assert (released.stage, released.pool, dict(released.held)) == (Stage.POOL, "a", {"b": OLD})


@pytest.mark.parametrize("previous", [
    None,  # status.upgrade lost: a status write that never landed before a restart
    {"stage": "Pool", "pool": "a", "target": TARGET.as_status()},  # a stale word from before the restart
    {"stage": "ControlPlane", "target": {"kubernetes": "v1.34.9", "talos": "v1.13.6"}},  # an earlier target's
], ids=["missing", "stale-stage", "stale-target"])
def test_without_a_true_status_the_pools_wait_for_the_control_plane_the_cluster_reports(
    previous: dict[str, Any] | None,
) -> None:
    """The decision is read from the live objects: the KamajiControlPlane's spec is at the target but it still
    reports the old minor, so a pool released now would run a kubelet newer than its apiserver."""
    pools = {"a": _pool(OLD), "b": _pool(OLD)}
    for reported, ready in (("v1.34.9", True), ("v1.35.6", False), (None, False)):
        live = LiveState("v1.35.6", reported, ready, (2, 2), pools)
        decision, _ = decide("v1.35", "v1.13.6", ["a", "b"], live, 60, previous)
        assert decision.stage is Stage.CONTROL_PLANE, (reported, ready)
        assert dict(decision.held) == {"a": OLD, "b": OLD}, (reported, ready)
        assert decision.remaining == ("a", "b")


def test_a_pool_whose_new_machines_are_not_yet_available_holds_the_next() -> None:
    """Updated is not enough: a machine at the new version that is not yet available serves nothing, and
    rolling the next pool then would take two pools' capacity down at once."""
    previous = {"stage": "Pool", "pool": "a", "target": TARGET.as_status()}
    unavailable = PoolState(TARGET, replicas=2, updated=2, available=1, settled=True)
    live = _live({"a": unavailable, "b": _pool(OLD)})
    decision, _ = decide("v1.35", "v1.13.6", ["a", "b"], live, 60, previous)
    assert (decision.stage, decision.pool, dict(decision.held)) == (Stage.POOL, "a", {"b": OLD})
    assert decision.waiting == "pool a to finish its rollout (2/2 updated, 1/2 available)"
    last, _ = decide("v1.35", "v1.13.6", ["a"], _live({"a": unavailable}), 60, previous)
    assert (last.stage, last.pool) == (Stage.POOL, "a"), "the last pool keeps the stage until it is available"
