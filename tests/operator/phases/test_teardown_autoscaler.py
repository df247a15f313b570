"""Teardown stops the cluster-autoscaler before the MachineDeployments go: it would scale them back."""

from __future__ import annotations

import asyncio

import pytest
from kube_emulator import KubeEmulator
from operator_support import before_first_write, eventually, running_operator
from test_teardown import KUBEVIRT, TC, delete_cluster, gone, last_seen, ready, seeded, step, url

from tenantctl.operator.kube.client import Connection, KubeClient, Resource

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

AUTOSCALER = "demo-cluster-autoscaler"
DEPLOYMENTS = "apps/v1/deployments"


def autoscaler_reports(mgmt: KubeEmulator, status: dict[str, int]) -> None:
    """Set the status the Deployment controller would write for the tenant's autoscaler."""
    live = mgmt.get(DEPLOYMENTS, "tenant-demo", AUTOSCALER)
    assert live is not None
    mgmt.put(DEPLOYMENTS, {**live, "status": status})


async def test_the_autoscaler_is_scaled_to_zero_and_deleted_before_any_machine_deployment(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, url(tenant), "kubevirt.yaml", cdi=True)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT))
        assert mgmt.get("apps/v1/deployments", "tenant-demo", AUTOSCALER) is not None
        since = len(mgmt.journal)
        await delete_cluster(mgmt, KUBEVIRT)
        await eventually(lambda: gone(mgmt, TC, *KUBEVIRT))

    writes = [e for e in mgmt.journal[since:] if e.plural != "tenantclusters"]
    stop = next(e.seq for e in writes if e.verb == "patch" and e.name == AUTOSCALER)
    removed = next(e.seq for e in writes if e.verb == "delete" and e.name == AUTOSCALER)
    md_deletes = [e.seq for e in writes if e.verb == "delete" and e.plural == "machinedeployments"]
    assert md_deletes, "the MachineDeployments are deleted"
    assert stop < removed < min(md_deletes), "scaled to zero, deleted, and only then the MachineDeployments"
    assert gone(mgmt, "apps/v1/deployments", "tenant-demo", AUTOSCALER)
    assert last_seen(mgmt, "apps/v1/deployments", "tenant-demo", AUTOSCALER)["spec"]["replicas"] == 0
    assert f"Deployment/{AUTOSCALER}" in step(mgmt, KUBEVIRT, "ClusterAPI")["message"]


async def test_a_tenant_without_an_autoscaler_tears_down_as_before(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, url(tenant))
    key = ("tenant-acme", "acme")
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, key))
        await delete_cluster(mgmt, key)
        await eventually(lambda: gone(mgmt, TC, *key))
    assert "autoscaler" not in step(mgmt, key, "ClusterAPI")["message"]


async def test_the_autoscaler_is_deleted_only_once_its_pods_are_gone(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """Scaled to zero is not stopped: the Deployment stays until its status counts no replica."""
    seeded(mgmt, url(tenant), "kubevirt.yaml", cdi=True)
    plural = DEPLOYMENTS
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT))
        autoscaler_reports(mgmt, {"replicas": 1, "readyReplicas": 1})
        await delete_cluster(mgmt, KUBEVIRT)
        await eventually(lambda: (mgmt.get(plural, "tenant-demo", AUTOSCALER) or {}).get("spec", {}).get("replicas")
                         == 0)
        await asyncio.sleep(1.0)  # virtual time, within the 2 s the test operator waits: the pod still stops
        assert mgmt.get(plural, "tenant-demo", AUTOSCALER) is not None, "deleted while its pod still ran"
        assert mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", "tenant-demo", "demo-md0") is not None
        autoscaler_reports(mgmt, {"replicas": 0})
        await eventually(lambda: gone(mgmt, TC, *KUBEVIRT))
    assert gone(mgmt, plural, "tenant-demo", AUTOSCALER)
    assert f"Deployment/{AUTOSCALER}, MachineDeployment/" in step(mgmt, KUBEVIRT, "ClusterAPI")["message"]


async def test_an_autoscaler_that_does_not_stop_in_time_is_deleted_and_said_so(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, url(tenant), "kubevirt.yaml", cdi=True)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT))
        autoscaler_reports(mgmt, {"replicas": 1})
        await delete_cluster(mgmt, KUBEVIRT)
        await eventually(lambda: gone(mgmt, TC, *KUBEVIRT))
    assert gone(mgmt, DEPLOYMENTS, "tenant-demo", AUTOSCALER)
    assert f"Deployment/{AUTOSCALER} (its pods still ran after 2s)" in step(mgmt, KUBEVIRT, "ClusterAPI")["message"]


async def test_an_autoscaler_gone_before_its_scale_down_is_the_step_done_not_a_retry(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """During a layout handover two shards tear one tenant down at once: the other may delete the
    autoscaler between this one's read and its patch. The 404 means it is gone, not a handler failure
    that kopf retries a minute later (seen once, under load, in the two-layouts test)."""
    seeded(mgmt, url(tenant), "kubevirt.yaml", cdi=True)
    deployments = Resource("apps/v1", "Deployment", "deployments", True)
    async with running_operator(mgmt), KubeClient(Connection.from_server(url(mgmt))) as other:
        await eventually(lambda: ready(mgmt, KUBEVIRT))

        async def the_other_shard_first() -> None:
            await other.delete(deployments, AUTOSCALER, "tenant-demo")

        vanished = before_first_write(mgmt, "PATCH", "deployments", the_other_shard_first)
        await delete_cluster(mgmt, KUBEVIRT)
        await eventually(lambda: gone(mgmt, TC, *KUBEVIRT), timeout=10)
    assert vanished, "the patch met an autoscaler already deleted"
    assert step(mgmt, KUBEVIRT, "ClusterAPI")["outcome"] == "Done"

