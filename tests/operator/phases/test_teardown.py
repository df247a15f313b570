"""Deleting a TenantCluster: disks freed through the tenant first, then Flux, Cluster API, the substrate."""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from kube_emulator import PVC_PROTECTION, KubeEmulator
from operator_support import (
    before_first_write,
    condition,
    eventually,
    kubeconfig_for,
    management,
    running_operator,
    seed_control_plane,
    seed_documents,
    silent_server,
)
from syrupy.assertion import SnapshotAssertion

from tenant_support import load_example
from tenantctl.operator.kube.client import Connection, KubeClient, Resource
from tenantctl.operator.phases.teardown import claims_of

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
TENANT_CLUSTERS = Resource("tenantctl.io/v1alpha1", "TenantCluster", "tenantclusters", True)
HELM_RELEASES = Resource("helm.toolkit.fluxcd.io/v2", "HelmRelease", "helmreleases", True)
KCPS = Resource("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane", "kamajicontrolplanes", True)
CLUSTERS = Resource("cluster.x-k8s.io/v1beta1", "Cluster", "clusters", True)
CAPI_FINALIZER = "cluster.cluster.x-k8s.io"
PROXMOX = ("tenant-acme", "acme")
KUBEVIRT = ("tenant-demo", "demo")
FINISHED = {"steps": [{"step": "Finalizer", "outcome": "Done", "message": "finalizer removed; no leftovers"}],
            "leftovers": [], "volumes": []}
"""Another shard layout's teardown report, finished: what no teardown of ours may replace or run after."""


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def last_seen(emulator: KubeEmulator, plural: str, ns: str, name: str) -> dict[str, Any]:
    """The last state of an object, also after it is gone (its teardown summary lives there)."""
    return dict(emulator.objects[plural, ns, name].last.raw)


def gone(emulator: KubeEmulator, plural: str, ns: str, name: str) -> bool:
    return emulator.get(plural, ns, name) is None


def teardown_status(mgmt: KubeEmulator, key: tuple[str, str]) -> dict[str, Any]:
    return dict(last_seen(mgmt, TC, *key)["status"]["teardown"])


def step(mgmt: KubeEmulator, key: tuple[str, str], name: str) -> dict[str, Any]:
    return next(s for s in teardown_status(mgmt, key)["steps"] if s["step"] == name)


def volumes(tenant: KubeEmulator) -> None:
    """Three disks: two claims mounted by one pod, one claim by a pod elsewhere, an idle pod."""
    for pv, disk in (("pv-a", "local-zfs:vm-1-disk-a"), ("pv-b", "local-zfs:vm-1-disk-b"), ("pv-c", "local-zfs:c")):
        tenant.put("v1/persistentvolumes", {"metadata": {"name": pv}, "spec": {"csi": {"volumeHandle": disk}}})
    for ns, claim, pv in (("app", "data-a", "pv-a"), ("app", "data-b", "pv-b"), ("db", "data-c", "pv-c")):
        tenant.put(
            "v1/persistentvolumeclaims",
            {"metadata": {"name": claim, "namespace": ns, "finalizers": [PVC_PROTECTION]}, "spec": {"volumeName": pv}},
        )
    both = [{"name": n, "persistentVolumeClaim": {"claimName": n}} for n in ("data-a", "data-b")]
    tenant.put("v1/pods", {"metadata": {"name": "both", "namespace": "app"}, "spec": {"volumes": both}})
    tenant.put("v1/pods", {"metadata": {"name": "idle", "namespace": "app"}, "spec": {"volumes": [{"name": "tmp"}]}})
    one = [{"name": "d", "persistentVolumeClaim": {"claimName": "data-c"}}]
    tenant.put("v1/pods", {"metadata": {"name": "pg", "namespace": "db"}, "spec": {"volumes": one}})


def seeded(mgmt: KubeEmulator, tenant_url: str | None, example: str = "proxmox.yaml", *, cdi: bool = False) -> None:
    docs = load_example(example)
    management(mgmt, cdi=cdi)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, tenant_url)


async def delete_cluster(mgmt: KubeEmulator, key: tuple[str, str]) -> None:
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        await api.delete(TENANT_CLUSTERS, key[1], key[0])


def ready(mgmt: KubeEmulator, key: tuple[str, str]) -> bool:
    return condition(mgmt.get(TC, *key), "Ready").get("status") == "True"


def test_claims_of_a_pod_mounting_two_claims_are_both_found() -> None:
    pod = {"spec": {"volumes": [
        {"name": "a", "persistentVolumeClaim": {"claimName": "data-a"}},
        {"name": "cfg", "configMap": {"name": "x"}},
        {"name": "b", "persistentVolumeClaim": {"claimName": "data-b"}},
    ]}}
    assert claims_of(pod) == {"data-a", "data-b"}


async def test_proxmox_teardown_frees_the_disks_before_anything_else_goes(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, url(tenant))
    volumes(tenant)
    tenant.pv_release_delay = 1.0
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        since = len(mgmt.journal)
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))

    inside = [e for e in tenant.journal if e.verb in ("delete", "gone")]
    claim_deletes = [e.seq for e in inside if e.verb == "delete" and e.plural == "persistentvolumeclaims"]
    pod_deletes = [e for e in inside if e.verb == "delete" and e.plural == "pods"]
    assert len(claim_deletes) == 3
    assert max(claim_deletes) < min(e.seq for e in pod_deletes), "claims are deleted before the pods holding them"
    assert sorted((e.namespace, e.name) for e in pod_deletes) == [("app", "both"), ("db", "pg")]
    assert sorted(tenant.freed_disks) == ["local-zfs:c", "local-zfs:vm-1-disk-a", "local-zfs:vm-1-disk-b"]
    volumes_gone = max(e.seq for e in inside if e.verb == "gone" and e.plural == "persistentvolumes")
    outside = [e for e in mgmt.journal[since:] if e.verb == "delete" and e.plural != "tenantclusters"]
    assert outside and volumes_gone < min(e.seq for e in outside), "the PVs are awaited before the CSI driver goes"

    order = [e.plural for e in outside]
    first = {plural: order.index(plural) for plural in dict.fromkeys(order)}
    assert first["helmreleases"] < first["machinedeployments"] < first["clusters"] < first["kamajicontrolplanes"]
    for plural in ("helmreleases", "machinedeployments", "kamajicontrolplanes", "clusters", "talosconfigtemplates",
                   "deployments", "secrets"):
        assert not [o for o in mgmt.live(plural) if o["metadata"].get("namespace") == "tenant-acme"
                    and o["metadata"].get("labels", {}).get("tenantctl.io/cluster") == "acme"], plural

    summary = teardown_status(mgmt, PROXMOX)
    assert summary["leftovers"] == []
    assert [s["step"] for s in summary["steps"]] == [
        "TenantVolumes", "HelmReleases", "ClusterAPI", "Substrate", "Finalizer",
    ]
    assert "deleted 3 claims and 2 pods; 3 volumes released" in step(mgmt, PROXMOX, "TenantVolumes")["message"]


async def test_a_volume_without_a_csi_handle_is_recorded_by_its_name(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """A PersistentVolume no CSI driver made (hostPath, a static NFS export) has no volumeHandle: its name
    is what the record can name."""
    seeded(mgmt, url(tenant))
    tenant.put("v1/persistentvolumes", {"metadata": {"name": "pv-static"}, "spec": {"hostPath": {"path": "/srv"}}})
    tenant.put("v1/persistentvolumeclaims", {"metadata": {"name": "static", "namespace": "app",
                                                          "finalizers": [PVC_PROTECTION]},
                                             "spec": {"volumeName": "pv-static"}})
    tenant.pv_release_delay = 0.5
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    assert teardown_status(mgmt, PROXMOX)["freed"]["volumes"] == ["pv-static"]


async def test_a_resumed_teardown_records_what_the_whole_teardown_freed(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """A process killed after it freed the disks left this record; the one that resumes finds no claim and
    no volume left, and the record still says what was deleted and released, and that it was resumed."""
    seeded(mgmt, url(tenant))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        current = mgmt.get(TC, *PROXMOX)
        assert current is not None
        current["status"]["teardown"] = {
            "steps": [], "leftovers": [], "volumes": ["local-zfs:vm-1-disk-a", "local-zfs:vm-1-disk-b"],
            "freed": {"claims": 2, "pods": 1, "volumes": []},
        }
        mgmt.put(TC, current)
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    message = step(mgmt, PROXMOX, "TenantVolumes")["message"]
    assert message == "deleted 2 claims and 1 pods; 2 volumes released (counts include an earlier attempt's)"
    assert teardown_status(mgmt, PROXMOX)["freed"]["volumes"] == ["local-zfs:vm-1-disk-a", "local-zfs:vm-1-disk-b"]


async def test_a_tenant_without_claims_is_the_clean_case(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, url(tenant))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    assert step(mgmt, PROXMOX, "TenantVolumes")["outcome"] == "Done"
    assert teardown_status(mgmt, PROXMOX)["leftovers"] == []


@pytest.mark.parametrize(("example", "key"), [("proxmox.yaml", PROXMOX), ("kubevirt.yaml", KUBEVIRT)])
async def test_a_clean_teardown_records_every_step_in_its_order(
    mgmt: KubeEmulator, tenant: KubeEmulator, snapshot: SnapshotAssertion, example: str, key: tuple[str, str]
) -> None:
    """The whole record a person reads after a teardown, step by step, pinned word for word."""
    seeded(mgmt, url(tenant), example, cdi=example == "kubevirt.yaml")
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, key))
        await delete_cluster(mgmt, key)
        await eventually(lambda: gone(mgmt, TC, *key))
    record = teardown_status(mgmt, key)
    assert {s["outcome"] for s in record["steps"]} <= {"Done", "Skipped"} and record["leftovers"] == []
    assert record == snapshot


async def test_an_unreachable_tenant_is_a_reported_leftover_and_the_finalizer_still_goes(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    async with silent_server() as silent:
        seeded(mgmt, url(tenant))
        async with running_operator(mgmt):
            await eventually(lambda: ready(mgmt, PROXMOX))
            secret = mgmt.get("v1/secrets", "tenant-acme", "acme-admin-kubeconfig")
            assert secret is not None
            secret["data"]["super-admin.svc"] = base64.b64encode(kubeconfig_for(silent).encode()).decode()
            mgmt.put("v1/secrets", secret)
            await delete_cluster(mgmt, PROXMOX)
            await eventually(lambda: gone(mgmt, TC, *PROXMOX), timeout=30)
            leftover = lambda: [e for e in mgmt.live("events") if e.get("reason") == "Leftover"]  # noqa: E731
            await eventually(leftover)
    tenant_step = step(mgmt, PROXMOX, "TenantVolumes")
    assert tenant_step["outcome"] == "Leftover"
    assert "did not answer within 3s" in tenant_step["message"]
    assert "disks may remain on the hypervisor: unknown" in tenant_step["message"]
    assert teardown_status(mgmt, PROXMOX)["leftovers"] == [f"TenantVolumes: {tenant_step['message']}"]
    warning = leftover()[0]
    assert warning["type"] == "Warning" and "disks may remain on the hypervisor" in warning["message"]
    assert gone(mgmt, "cluster.x-k8s.io/v1beta1/clusters", *PROXMOX), "later steps still ran"


async def _delete_the_kubeconfig(mgmt: KubeEmulator) -> None:
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        await api.delete(Resource("v1", "Secret", "secrets", True), "acme-admin-kubeconfig", "tenant-acme")


async def _garble_the_kubeconfig(mgmt: KubeEmulator) -> None:
    secret = mgmt.get("v1/secrets", "tenant-acme", "acme-admin-kubeconfig")
    assert secret is not None
    secret["data"]["super-admin.svc"] = "not base64!"
    mgmt.put("v1/secrets", secret)


@pytest.mark.parametrize(
    ("spoil", "why"),
    [
        (_delete_the_kubeconfig, "the admin kubeconfig Secret is gone"),
        (_garble_the_kubeconfig,
         "the admin kubeconfig Secret is not a base64-encoded YAML kubeconfig (Only base64 data is allowed)"),
    ],
    ids=["gone", "garbled"],
)
async def test_a_provisioned_tenant_without_a_usable_kubeconfig_reports_its_disks_as_leftovers(
    mgmt: KubeEmulator, tenant: KubeEmulator, spoil: Callable[[KubeEmulator], Awaitable[None]], why: str
) -> None:
    """An apiserver that existed may have made disks; without its kubeconfig nobody can free them. The
    later steps still run: a garbled Secret must not hold the deletion up."""
    seeded(mgmt, url(tenant))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        await spoil(mgmt)
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX), timeout=30)
    tenant_step = step(mgmt, PROXMOX, "TenantVolumes")
    assert tenant_step["outcome"] == "Leftover"
    assert tenant_step["message"] == f"{why}; disks may remain on the hypervisor: unknown"
    assert gone(mgmt, "cluster.x-k8s.io/v1beta1/clusters", *PROXMOX), "later steps still ran"


async def test_volumes_the_csi_driver_never_releases_are_listed_as_leftovers(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, url(tenant))
    volumes(tenant)
    tenant.csi_running = False
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX), timeout=40)
    message = step(mgmt, PROXMOX, "TenantVolumes")["message"]
    assert "volumes not released within 20s" in message
    assert "disks may remain on the hypervisor: local-zfs:c, local-zfs:vm-1-disk-a, local-zfs:vm-1-disk-b" in message


async def test_stuck_releases_lose_their_finalizers_and_a_stuck_control_plane_is_a_leftover(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, url(tenant))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            releases = await api.list(HELM_RELEASES, "tenant-acme")
            assert releases, "the renderer emits tenant HelmReleases"
            stuck = releases[0]["metadata"]["name"]
            await api.merge_patch(HELM_RELEASES, stuck, "tenant-acme", {"metadata": {"finalizers": ["flux"]}})
            await api.merge_patch(KCPS, "acme", "tenant-acme", {"metadata": {"finalizers": ["kamaji"]}})
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX), timeout=30)
    assert gone(mgmt, "helm.toolkit.fluxcd.io/v2/helmreleases", "tenant-acme", stuck)
    suspended = last_seen(mgmt, "helm.toolkit.fluxcd.io/v2/helmreleases", "tenant-acme", stuck)
    assert suspended["spec"]["suspend"] is True
    assert f"finalizers dropped after 2s: {stuck}" in step(mgmt, PROXMOX, "HelmReleases")["message"]
    cluster_api = step(mgmt, PROXMOX, "ClusterAPI")
    assert cluster_api["outcome"] == "Leftover" and "still deleting after 2s" in cluster_api["message"]
    assert not gone(mgmt, "controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", *PROXMOX)
    assert gone(mgmt, "cluster.x-k8s.io/v1beta1/clusters", *PROXMOX)
    assert cluster_api["message"].endswith(", Cluster/acme, KamajiControlPlane/acme (still deleting after 2s)")


async def test_a_cluster_cluster_api_still_deletes_holds_the_inventory_until_the_bound(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """Cluster API still deleting the Machines (its finalizer on the Cluster): the step waits its bound
    before the control plane and the rest of the inventory go, and says what Cluster API waits for."""
    seeded(mgmt, url(tenant))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            await api.merge_patch(CLUSTERS, "acme", "tenant-acme", {"metadata": {"finalizers": [CAPI_FINALIZER]}})
            deleting = {"type": "Deleting", "status": "True", "reason": "WaitingForWorkersDeletion",
                        "message": "* Machines: acme-md0-x2b9k\n* MachineDeployments: acme-md0"}
            await api.merge_patch(CLUSTERS, "acme", "tenant-acme", {"status": {"v1beta2": {"conditions": [deleting]}}},
                                  status=True)
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: any(s["step"] == "ClusterAPI" for s in (
            last_seen(mgmt, TC, *PROXMOX).get("status") or {}).get("teardown", {}).get("steps", [])), timeout=30)
        # While the bound ran, the control plane and the ProxmoxCluster capmox reads were still there.
        cluster_api = step(mgmt, PROXMOX, "ClusterAPI")
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            await api.merge_patch(CLUSTERS, "acme", "tenant-acme", {"metadata": {"finalizers": None}})
        await eventually(lambda: gone(mgmt, TC, *PROXMOX), timeout=30)
    assert cluster_api["message"].endswith(
        "Cluster/acme (still deleting after 2s: * Machines: acme-md0-x2b9k * MachineDeployments: acme-md0), "
        "KamajiControlPlane/acme"), cluster_api["message"]
    deleted = [w.plural.rsplit("/", 1)[-1] for w in mgmt.writes() if w.verb == "delete"]
    order = list(dict.fromkeys(p for p in deleted if p in ("clusters", "kamajicontrolplanes", "proxmoxclusters")))
    assert order == ["clusters", "kamajicontrolplanes", "proxmoxclusters"], deleted


@pytest.mark.parametrize("cdi", [False, True], ids=["without-cdi", "with-cdi"])
async def test_kubevirt_datavolumes_only_where_cdi_serves_them(
    mgmt: KubeEmulator, tenant: KubeEmulator, cdi: bool
) -> None:
    seeded(mgmt, url(tenant), "kubevirt.yaml", cdi=cdi)
    labels = {"cluster.x-k8s.io/cluster-name": "demo"}
    if cdi:
        mgmt.put("cdi.kubevirt.io/v1beta1/datavolumes",
                 {"metadata": {"name": "demo-md0-disk", "namespace": "tenant-demo", "labels": labels}})
    mgmt.put("v1/services", {"metadata": {"name": "lb-1", "namespace": "tenant-demo", "labels": labels},
                             "spec": {"type": "LoadBalancer"}})
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT))
        await delete_cluster(mgmt, KUBEVIRT)
        await eventually(lambda: gone(mgmt, TC, *KUBEVIRT))
    substrate = step(mgmt, KUBEVIRT, "Substrate")
    assert substrate["outcome"] == "Done"
    if cdi:
        assert "1 DataVolumes deleted" in substrate["message"]
        assert gone(mgmt, "cdi.kubevirt.io/v1beta1/datavolumes", "tenant-demo", "demo-md0-disk")
    else:
        assert "no DataVolume CRD" in substrate["message"]
    assert "1 LoadBalancer Services deleted" in substrate["message"]
    assert gone(mgmt, "v1/services", "tenant-demo", "lb-1")
    assert step(mgmt, KUBEVIRT, "TenantVolumes")["outcome"] == "Skipped"
    assert teardown_status(mgmt, KUBEVIRT)["leftovers"] == []


async def test_a_refused_cluster_never_provisioned_is_deleted_without_leftovers(mgmt: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    docs[0]["spec"]["proxmox"]["dnsServer"] = ["192.0.2.53"]
    management(mgmt)
    seed_documents(mgmt, docs)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("reason") == "InvalidSpec")
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    assert step(mgmt, PROXMOX, "TenantVolumes")["outcome"] == "Skipped"
    assert step(mgmt, PROXMOX, "ClusterAPI")["message"] == "deleted nothing (already gone)"
    assert teardown_status(mgmt, PROXMOX)["leftovers"] == []


async def test_tenants_sharing_a_cluster_name_keep_their_own_cluster_scoped_objects(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, url(tenant), "kubevirt.yaml")
    twin = load_example("kubevirt.yaml")
    for d in twin:
        d["metadata"]["namespace"] = "tenant-twin"
    seed_documents(mgmt, twin)
    seed_control_plane(mgmt, twin, url(tenant))
    twin_key = ("tenant-twin", "demo")
    cluster_roles = "rbac.authorization.k8s.io/v1/clusterrolebindings"
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT) and ready(mgmt, twin_key))
        assert mgmt.get(cluster_roles, None, "tenant-demo-demo-kcsi-access") is not None
        assert mgmt.get(cluster_roles, None, "tenant-twin-demo-kcsi-access") is not None
        await delete_cluster(mgmt, twin_key)
        await eventually(lambda: gone(mgmt, TC, *twin_key))
    assert mgmt.get(cluster_roles, None, "tenant-twin-demo-kcsi-access") is None
    assert mgmt.get(cluster_roles, None, "tenant-demo-demo-kcsi-access") is not None, "the other tenant's role stays"


async def test_without_flux_the_release_step_is_skipped_saying_why(mgmt: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    docs[0]["spec"]["proxmox"]["dnsServer"] = ["192.0.2.53"]
    management(mgmt)
    del mgmt.resources[next(r for r, info in mgmt.resources.items() if info.kind == "HelmRelease")]
    seed_documents(mgmt, docs)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("reason") == "InvalidSpec")
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    assert step(mgmt, PROXMOX, "HelmReleases") == {**step(mgmt, PROXMOX, "HelmReleases"), "outcome": "Skipped",
                                                   "message": "Flux HelmRelease is not served"}


async def test_helm_releases_gone_before_their_suspension_are_the_step_done(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """During a layout handover two shards tear one tenant down at once: the other may suspend and delete
    the HelmReleases between this one's list and its patch. The 404s are the step done, not a failure."""
    seeded(mgmt, url(tenant), "kubevirt.yaml", cdi=True)
    async with running_operator(mgmt), KubeClient(Connection.from_server(url(mgmt))) as other:
        await eventually(lambda: ready(mgmt, KUBEVIRT))

        async def the_other_shard_first() -> None:
            for rel in await other.list(HELM_RELEASES, "tenant-demo"):
                await other.delete(HELM_RELEASES, rel["metadata"]["name"], "tenant-demo")

        vanished = before_first_write(mgmt, "PATCH", "helmreleases", the_other_shard_first)
        await delete_cluster(mgmt, KUBEVIRT)
        await eventually(lambda: gone(mgmt, TC, *KUBEVIRT), timeout=10)
    assert vanished, "every patch met a HelmRelease already deleted"
    assert step(mgmt, KUBEVIRT, "HelmReleases")["outcome"] == "Done"


async def test_a_tenant_whose_teardown_report_is_finished_runs_no_step_again(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """Another shard layout's teardown finished and released it, and kopf runs this handler anew for an
    event queued before: the kubeconfig is gone by then, and running the steps again warned that the
    disks may remain — falsely. A finished report (or a tenant gone) means nothing runs again; the
    finalizer still goes."""
    seeded(mgmt, url(tenant))
    await _delete_the_kubeconfig(mgmt)
    body = mgmt.get(TC, *PROXMOX)
    assert body is not None
    body["metadata"] |= {"finalizers": ["tenantctl.io/teardown"], "deletionTimestamp": "2026-12-06T00:00:00Z"}
    body["status"] = {"phase": "Deleting", "endpoint": "https://192.0.2.10:6443", "teardown": FINISHED}
    mgmt.put(TC, body)
    since = len(mgmt.journal)
    async with running_operator(mgmt):
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    assert teardown_status(mgmt, PROXMOX) == FINISHED
    assert not [e for e in mgmt.journal[since:] if e.verb == "delete"], "no step ran"
    assert not [e for e in mgmt.live("events") if e.get("reason") in ("Leftover", "Teardown")]


@pytest.mark.parametrize(
    ("inside", "method", "plural", "later"),
    [
        (True, "DELETE", "persistentvolumeclaims", ["TenantVolumes:", "HelmReleases:"]),
        (False, "PATCH", "helmreleases", ["HelmReleases:"]),
    ],
    ids=["freeing-the-disks", "at-a-step-boundary"],
)
async def test_a_teardown_another_one_finishes_meanwhile_stops_at_its_next_report(
    mgmt: KubeEmulator, tenant: KubeEmulator, inside: bool, method: str, plural: str, later: list[str]
) -> None:
    """Two shard layouts tear the tenant down at once, and the other finishes while this one is in a step
    (freeing the disks inside the tenant; deleting the HelmReleases, whose step ends with a report): this
    one's next report is refused and read again, the finished report stays, and nothing after it runs or
    is said — not even the step it was in (its later steps would find the control plane gone and warn
    falsely)."""
    seeded(mgmt, url(tenant))
    volumes(tenant)

    async def the_other_layout_finishes() -> None:
        body = mgmt.get(TC, *PROXMOX)
        assert body is not None
        body["status"]["teardown"] = FINISHED
        mgmt.put(TC, body)

    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, PROXMOX))
        events = len(mgmt.live("events"))
        other_finished = before_first_write(tenant if inside else mgmt, method, plural, the_other_layout_finishes)
        await delete_cluster(mgmt, PROXMOX)
        await eventually(lambda: gone(mgmt, TC, *PROXMOX))
    assert other_finished and teardown_status(mgmt, PROXMOX) == FINISHED
    assert not gone(mgmt, "cluster.x-k8s.io/v1beta1/clusters", *PROXMOX), "no later step ran"
    said = [str(e.get("message")) for e in mgmt.live("events")[events:] if e.get("reason") in ("Leftover", "Teardown")]
    assert not [m for m in said if any(m.startswith(step) for step in later) or "teardown finished" in m], said
