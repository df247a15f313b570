"""The operator on the real API servers, as its ServiceAccount with exactly the RBAC `install` renders.

The test plays Kamaji, Cluster API, cert-manager and the tenant's storage by writing what they write
(there are no such controllers here, and no kubelet); the tenant's API is a second real kube-apiserver.
A missing verb in the rendered RBAC turns these tests red: the operator never runs as admin.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from operator_support import FAST, condition

from real_api import Api
from real_control_plane import ControlPlane
from real_seed import (
    VOLUMES,
    eventually,
    operator_connection,
    play_storage,
    running_operator,
    seed_control_plane,
    seed_tenant,
    tenant_volumes,
)
from tenant_support import load_example
from tenantctl.operator.runtime.finalizers import finalizer_of

pytestmark = [pytest.mark.timeout(240)]

TC = ("tenantctl.io/v1alpha1", "TenantCluster")
MD = ("cluster.x-k8s.io/v1beta1", "MachineDeployment")
HR = ("helm.toolkit.fluxcd.io/v2", "HelmRelease")
OURS = "tenantctl.io/cluster=acme"
OWNED_KINDS = [
    ("cluster.x-k8s.io/v1beta1", "Cluster"), MD, ("cluster.x-k8s.io/v1beta1", "MachineHealthCheck"),
    ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane"),
    ("infrastructure.cluster.x-k8s.io/v1alpha1", "ProxmoxCluster"),
    ("infrastructure.cluster.x-k8s.io/v1alpha1", "ProxmoxMachineTemplate"),
    ("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate"), HR,
    ("cert-manager.io/v1", "Certificate"), ("cert-manager.io/v1", "Issuer"), ("apps/v1", "Deployment"),
]


def _ready(admin: Api) -> dict[str, Any] | None:
    tc = admin.get(*TC, "tenant-acme", "acme")
    return tc if condition(tc, "Ready").get("status") == "True" else None


async def _created(admin: Api, tenant_plane: ControlPlane) -> dict[str, Any]:
    docs = load_example("proxmox.yaml")
    seed_tenant(admin, docs)
    seed_control_plane(admin, docs, tenant_plane)
    return dict(await eventually(lambda: _ready(admin), 120, what="the tenant Ready"))


async def test_the_operator_as_its_service_account_creates_a_tenant(
    installed: Any, admin: Api, tenant_admin: Api, management: ControlPlane, tenant_plane: ControlPlane,
) -> None:
    async with running_operator(operator_connection(management), FAST):
        tc = await _created(admin, tenant_plane)
    status = tc["status"]
    assert condition(tc, "Ready")["message"] == "all objects applied, tenant bootstrapped"
    assert status["phase"] == "Ready" and status["observedGeneration"] == tc["metadata"]["generation"]
    assert finalizer_of(FAST.shard) in tc["metadata"]["finalizers"], tc["metadata"]
    # Every object of the inventory is there, written by the operator's field manager with server-side apply.
    for api_version, kind in OWNED_KINDS:
        objects = admin.list(api_version, kind, "tenant-acme", OURS)
        assert objects, kind
        for obj in objects:
            managers = {(f["manager"], f["operation"]) for f in obj["metadata"]["managedFields"]}
            assert ("tenantctl", "Apply") in managers, (kind, managers)
    # The status subresource carries what the operator wrote; the spec is the user's alone.
    (user,) = [f for f in tc["metadata"]["managedFields"] if f["manager"] == "kubectl"]
    assert "f:status" not in user["fieldsV1"]
    # Inside the tenant: the bootstrap token and the node RBAC, applied through the admin kubeconfig.
    tokens = [s for s in tenant_admin.list("v1", "Secret", "kube-system")
              if s.get("type") == "bootstrap.kubernetes.io/token"]
    assert len(tokens) == 1, tokens


async def test_teardown_frees_the_tenants_volumes_before_its_machines_go(
    installed: Any, admin: Api, tenant_admin: Api, management: ControlPlane, tenant_plane: ControlPlane,
) -> None:
    tenant_volumes(tenant_admin)
    freed: list[str] = []
    async with running_operator(operator_connection(management), FAST):
        await _created(admin, tenant_plane)
        assert admin.delete(*TC, "tenant-acme", "acme")

        def claims_gone() -> bool:
            play_storage(tenant_admin, release=False)
            return not tenant_admin.list("v1", "PersistentVolumeClaim")

        await eventually(claims_gone, 60, what="the tenant's claims deleted")
        assert {p["metadata"]["name"] for p in tenant_admin.list("v1", "Pod", "app")} == {"idle"}
        assert not tenant_admin.list("v1", "Pod", "db"), "the pods holding the claims are deleted"
        # The CSI driver has not released the volumes yet: nothing of the management side has gone.
        await asyncio.sleep(FAST.poll_interval * 3)
        assert admin.list(*MD, "tenant-acme", OURS) and admin.list(*HR, "tenant-acme", OURS)
        last: dict[str, Any] = {}

        def tenant_gone() -> bool:
            freed.extend(play_storage(tenant_admin, release=True))
            tc = admin.get(*TC, "tenant-acme", "acme")
            if tc is not None:
                last.update(tc)
            return tc is None

        await eventually(tenant_gone, 90, what="the TenantCluster gone")

        def teardown_events() -> list[dict[str, Any]]:
            return sorted((e for e in admin.list("v1", "Event", "tenant-acme")  # ordered as etcd wrote them
                           if e["involvedObject"]["kind"] == "TenantCluster" and e["involvedObject"]["name"] == "acme"
                           and e["reason"] in ("Teardown", "Leftover")),
                          key=lambda e: int(e["metadata"]["resourceVersion"]))

        # kopf posts Events from a queue of its own, after the handler that recorded them: the last
        # step's may land after the object is gone (and is lost if the operator stops first), so wait
        # for four while the operator still runs.
        await eventually(lambda: len(teardown_events()) >= 4, 30, what="the teardown's Events posted")
    assert sorted(freed) == sorted(disk for _, disk, _, _ in VOLUMES)
    for api_version, kind in OWNED_KINDS:
        assert admin.list(api_version, kind, "tenant-acme", OURS) == [], kind
    # The status goes with the object; the Events the operator recorded for each step stay.
    events = teardown_events()
    steps = [e["message"].split(":", 1)[0] for e in events]
    assert steps[:4] == ["TenantVolumes", "HelmReleases", "ClusterAPI", "Substrate"], steps
    assert all(e["reason"] == "Teardown" for e in events), "no leftovers"
    assert "deleted 3 claims and 2 pods; 3 volumes released" in events[0]["message"]
    assert last["status"]["teardown"]["steps"][0]["step"] == "TenantVolumes"
