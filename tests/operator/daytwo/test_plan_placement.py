"""`tenantctl plan` for placement changes and against the live address pools.

A node added to a spread pool is new objects and a replica change, never a rotation; leaving spread
deletes the old MachineDeployment's workers and says so; a live pool too short for what the input can
claim is named before anything is applied.
"""

from __future__ import annotations

from typing import Any

import pytest
from daytwo_support import NS, PLURALS, applied, documents, seed_management, set_status, url
from kube_emulator import KubeEmulator, declare
from pinning import pin

from tenant_support import doc
from tenantctl.operator.daytwo.plan import TenantPlan, plan_cluster, render_text
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(20)]
POOLS = ("ipam.cluster.x-k8s.io/v1alpha2/inclusterippools", "InClusterIPPool", True, ())


async def plan_of(mgmt: KubeEmulator, docs: list[dict[str, Any]]) -> TenantPlan:
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        plan = await plan_cluster(api, cluster, tenant.pools_of(cluster), docs)
    pin(render_text([plan]))
    return plan


def spread_docs(nodes: list[str], replicas: int = 4) -> list[dict[str, Any]]:
    docs = documents()
    doc(docs, "TenantCluster")["spec"]["proxmox"]["allowedNodes"] = nodes
    pool = doc(docs, "NodePool")["spec"]
    pool["replicas"] = replicas
    pool["proxmox"]["placement"] = "spread"
    return docs


def changes(plan: TenantPlan) -> dict[str, tuple[str, str, tuple[str, ...]]]:
    return {c.ref: (c.action.value, c.note, c.diff) for c in plan.changes if c.action.value != "no-op"}


async def test_a_node_added_to_a_spread_pool_creates_its_group_and_moves_one_worker(mgmt: KubeEmulator) -> None:
    before = spread_docs(["pve1", "pve2", "pve3"], replicas=6)
    seed_management(mgmt, before, None)
    await applied(mgmt, before)
    plan = await plan_of(mgmt, spread_docs(["pve1", "pve2", "pve3", "pve4"], replicas=6))
    found = changes(plan)
    assert not plan.rotations
    created = {ref.split("/")[0] for ref, (action, _, _) in found.items() if action == "create"}
    assert created == {"ProxmoxMachineTemplate", "MachineDeployment", "MachineHealthCheck"}
    assert {ref for ref, (action, _, _) in found.items() if action == "create"} >= {
        "MachineDeployment/acme-md0-pve4", "MachineHealthCheck/acme-md0-pve4",
    }
    assert found["MachineDeployment/acme-md0-pve3"][2] == ("~ spec.replicas: 2 -> 1",)
    assert found["ProxmoxCluster/acme"][0] == "update in place"
    assert set(found) == {
        "ProxmoxCluster/acme", "MachineDeployment/acme-md0-pve3", "MachineDeployment/acme-md0-pve4",
        "MachineHealthCheck/acme-md0-pve4",
        *(ref for ref in found if ref.startswith("ProxmoxMachineTemplate/acme-md0-pve4-")),
    }


async def test_a_template_change_rotates_each_group_with_its_own_workers(mgmt: KubeEmulator) -> None:
    before = spread_docs(["pve1", "pve2"], replicas=3)
    seed_management(mgmt, before, None)
    await applied(mgmt, before)
    after = spread_docs(["pve1", "pve2"], replicas=3)
    doc(after, "NodePool")["spec"]["proxmox"]["diskSizeGB"] = 40
    notes = sorted(c.note for c in (await plan_of(mgmt, after)).rotations)
    assert notes == [
        "pool md0 on pve1: 2 worker(s) replaced, maxSurge 1, maxUnavailable 0",
        "pool md0 on pve2: 1 worker(s) replaced, maxSurge 1, maxUnavailable 0",
    ]


async def test_leaving_spread_says_the_old_groups_workers_are_deleted(mgmt: KubeEmulator) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    set_status(mgmt, "MachineDeployment", "acme-md0", {"replicas": 2})
    found = changes(await plan_of(mgmt, spread_docs(["pve1", "pve2"], replicas=2)))
    assert found["MachineDeployment/acme-md0"][:2] == (
        "prune", "no longer rendered: its 2 worker(s) are drained and deleted",
    )
    assert found["MachineDeployment/acme-md0-pve1"][0] == "create"


async def test_a_live_address_pool_too_short_for_the_input_is_named(mgmt: KubeEmulator) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    declare(mgmt, [POOLS])
    set_status(mgmt, "MachineDeployment", "acme-md0", {})  # no status yet: its spec's 2 machines count
    mgmt.put(POOLS[0], {"apiVersion": "ipam.cluster.x-k8s.io/v1alpha2", "kind": "InClusterIPPool",
                        "metadata": {"name": "acme-v4-icip", "namespace": NS},
                        "status": {"ipAddresses": {"total": 51, "used": 50, "free": 1}}})
    grown = documents()
    doc(grown, "NodePool")["spec"]["replicas"] = 3
    plan = await plan_of(mgmt, grown)
    assert plan.capacity == [
        "address pool acme-v4-icip: 1 free of 51, but this input can claim 2 more at once (4 machines with surge, "
        "2 hold one now): CAIP leaves the rest pending and their Machines wait with no error; add addresses or "
        "free leaked IPAddresses"
    ]
    assert "  !! address pool acme-v4-icip: 1 free of 51" in render_text([plan])
    # As it is, the input claims 3 (2 + surge), 2 held: 1 more fits the 1 free.
    assert (await plan_of(mgmt, documents())).capacity == []


async def test_a_pool_scaled_to_zero_holds_no_address(mgmt: KubeEmulator) -> None:
    """status.replicas 0 is a count, not a missing one: the pool's spec does not stand in for it."""
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    declare(mgmt, [POOLS])
    set_status(mgmt, "MachineDeployment", "acme-md0", {"replicas": 0})
    mgmt.put(POOLS[0], {"apiVersion": "ipam.cluster.x-k8s.io/v1alpha2", "kind": "InClusterIPPool",
                        "metadata": {"name": "acme-v4-icip", "namespace": NS},
                        "status": {"ipAddresses": {"total": 51, "used": 49, "free": 2}}})
    assert (await plan_of(mgmt, documents())).capacity == [
        "address pool acme-v4-icip: 2 free of 51, but this input can claim 3 more at once (3 machines with surge, "
        "0 hold one now): CAIP leaves the rest pending and their Machines wait with no error; add addresses or "
        "free leaked IPAddresses"
    ]


async def test_each_family_of_a_further_nic_is_checked_against_its_own_live_pool(
    mgmt: KubeEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PLURALS, "InClusterIPPool", POOLS[0])  # the render holds the NIC's pools
    docs = documents()
    doc(docs, "NodePool")["spec"]["proxmox"]["network"]["additionalDevices"] = [{
        "name": "net1", "bridge": "vmbr1", "vlan": 30,
        "ipv4": {"addresses": ["10.30.0.10-10.30.0.12"], "prefix": 24},
        "ipv6": {"addresses": ["fd30::10-fd30::12"], "prefix": 64}}]
    seed_management(mgmt, docs, None)
    declare(mgmt, [POOLS])
    await applied(mgmt, docs)
    set_status(mgmt, "MachineDeployment", "acme-md0", {})
    for name, free in (("acme-md0-net1-v4", 1), ("acme-md0-net1-v6", 0)):
        mgmt.put(POOLS[0], {"apiVersion": "ipam.cluster.x-k8s.io/v1alpha2", "kind": "InClusterIPPool",
                            "metadata": {"name": name, "namespace": NS},
                            "status": {"ipAddresses": {"total": 3, "used": 3 - free, "free": free}}})
    plan = await plan_of(mgmt, docs)
    assert [line.split(":")[0] for line in plan.capacity] == ["address pool acme-md0-net1-v6"], plan.capacity
    assert plan.capacity[0].startswith("address pool acme-md0-net1-v6: 0 free of 3, but this input can claim 1 more")
