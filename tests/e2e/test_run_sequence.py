"""`e2e run` against kmock (management and tenant API) and fakepve (the hypervisor), over loopback.

A small simulator stands in for the controllers: it publishes the tenant kubeconfig and Ready nodes
once the TenantCluster exists, binds the claim to a volume it puts on the fake Proxmox storage, and
frees the volume when the claim goes. Each test breaks one of those reactions and expects the step
that must notice it to fail, within its bounded wait.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakepve import FakePve  # type: ignore[import-untyped]
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.e2e.fixture import render_fixture
from tenantctl.e2e.kube import Kube
from tenantctl.e2e.run import CONTROLLER_VMID_ANNOTATION, Harness, Timeouts, run_sequence
from tenantctl.proxmox.client import Target, connect
from tenantctl.proxmox.report import Report, Status

TOKEN_ID = "e2e@pve!harness"
SECRET = "harness-secret"
VMID = "798497"
NS = "tenant-e2e"
FIXTURE = """\
apiVersion: tenantctl.io/v1alpha1
kind: TenantCluster
metadata: {name: ${TENANTCTL_TENANT_NAME}, namespace: ${TENANTCTL_TENANT_NAMESPACE}}
spec:
  substrate: proxmox
  proxmox:
    credentialsSecretName: capmox-e2e
    allowedNodes: [${TENANTCTL_PVE_NODE}]
    dnsServers: [${TENANTCTL_PVE_DNS}]
    ipv4Config: {addresses: ["${TENANTCTL_PVE_ADDRESSES}"], prefix: 24, gateway: ${TENANTCTL_PVE_GATEWAY}}
    ccm: {credentialsSecretName: pve-ccm-e2e}
    csi:
      credentialsSecretName: pve-csi-e2e
      storageClasses: [{name: e2e-proxmox, storage: "${TENANTCTL_PVE_STORAGE}", default: true}]
---
apiVersion: tenantctl.io/v1alpha1
kind: NodePool
metadata: {name: md0, namespace: ${TENANTCTL_TENANT_NAMESPACE}}
spec:
  cluster: ${TENANTCTL_TENANT_NAME}
  replicas: ${TENANTCTL_WORKERS}
  resources: {cpu: 2, memory: 4Gi}
  proxmox: {sourceNode: pve1, templateTags: [talos], pool: "${TENANTCTL_PVE_POOL}"}
"""
STAND = {
    "TENANTCTL_KUBECONFIG": "unused-here", "TENANTCTL_PVE_URL": "https://unused:8006",
    "TENANTCTL_PVE_TOKEN_ID": TOKEN_ID, "TENANTCTL_PVE_NODE": "pve1", "TENANTCTL_PVE_STORAGE": "tenant-zfs",
    "TENANTCTL_PVE_POOL": "stand-e2e", "TENANTCTL_PVE_ADDRESSES": "192.0.2.100-192.0.2.110",
    "TENANTCTL_PVE_GATEWAY": "192.0.2.1", "TENANTCTL_PVE_DNS": "192.0.2.53", "TENANTCTL_WORKERS": "2",
    "PROXMOX_TOKEN_SECRET": SECRET,
}
RESOURCES: dict[str, tuple[str, bool]] = {
    "tenantctl.io/v1alpha1/tenantclusters": ("TenantCluster", True),
    "tenantctl.io/v1alpha1/nodepools": ("NodePool", True),
    "v1/secrets": ("Secret", True),
    "v1/namespaces": ("Namespace", False),
    "v1/nodes": ("Node", False),
    "v1/persistentvolumeclaims": ("PersistentVolumeClaim", True),
    "v1/persistentvolumes": ("PersistentVolume", False),
    "v1/pods": ("Pod", True),
    "apps/v1/deployments": ("Deployment", True),
}


@dataclass
class Cluster:
    """The controllers' side of the stand; `breaks` switches off single reactions."""

    kmock: Any
    pve: FakePve
    breaks: set[str] = field(default_factory=set)

    def key(self, resource: str, namespace: str | None, name: str) -> Any:
        return (self.kmock.resource(resource), namespace, name)

    def get(self, resource: str, namespace: str | None, name: str) -> Any:
        key = self.key(resource, namespace, name)
        return self.kmock.objects[key] if key in self.kmock.objects and not self.kmock.objects[key].deleted else None

    def put(self, resource: str, namespace: str | None, name: str, obj: dict[str, Any]) -> None:
        self.kmock.objects[self.key(resource, namespace, name)] = obj

    def volumes(self) -> dict[str, Any]:
        volumes: dict[str, Any] = self.pve.storages["tenant-zfs"].setdefault("volumes", {})
        return volumes

    def react(self) -> None:
        tenant = self.get("tenantctl.io/v1alpha1/tenantclusters", NS, "e2e")
        if tenant is not None and self.get("v1/secrets", NS, "e2e-admin-kubeconfig") is None:
            self._publish_tenant()
        if tenant is None and self.get("v1/secrets", NS, "e2e-admin-kubeconfig") is not None:
            self.kmock.objects[self.key("v1/secrets", NS, "e2e-admin-kubeconfig")].delete()
        claim = self.get("v1/persistentvolumeclaims", "default", "csi-probe")
        if claim is not None and not (claim.get("status") or {}).get("phase") and "bind" not in self.breaks:
            self._bind()
        pod = self.get("v1/pods", "default", "csi-probe")
        if pod is not None and not (pod.get("status") or {}).get("phase"):
            pod.patch({"status": {"phase": "Failed" if "read-back" in self.breaks else "Succeeded"}})
        pv = self.get("v1/persistentvolumes", None, "pvc-1")
        if claim is None and pv is not None:
            pv.delete()
            if "free-disk" not in self.breaks:
                self.volumes().pop(f"vm-{VMID}-pvc-1", None)

    def _publish_tenant(self) -> None:
        kubeconfig = {
            "apiVersion": "v1", "kind": "Config", "current-context": "t",
            "clusters": [{"name": "t", "cluster": {"server": str(self.kmock.url).rstrip("/")}}],
            "users": [{"name": "t", "user": {"token": "tenant-admin"}}],
            "contexts": [{"name": "t", "context": {"cluster": "t", "user": "t"}}],
        }
        data = base64.b64encode(yaml.safe_dump(kubeconfig).encode()).decode()
        self.put("v1/secrets", NS, "e2e-admin-kubeconfig",
                 {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "e2e-admin-kubeconfig", "namespace": NS},
                  "data": {"admin.conf": data}})
        ready = "False" if "nodes" in self.breaks else "True"
        for i in range(2):
            self.put("v1/nodes", None, f"e2e-md0-{i}", {"metadata": {"name": f"e2e-md0-{i}"},
                     "status": {"conditions": [{"type": "Ready", "status": ready}]}})
        self.put("apps/v1/deployments", NS, "e2e-pcsi-controller", {"metadata": {
            "name": "e2e-pcsi-controller", "namespace": NS, "annotations": {CONTROLLER_VMID_ANNOTATION: VMID}}})

    def _bind(self) -> None:
        owner = "9999" if "vmid" in self.breaks else VMID
        volume = f"vm-{owner}-pvc-1"
        if "disk" not in self.breaks:
            self.volumes()[volume] = {"content": "images", "format": "raw", "size": 1 << 30, "ctime": 0}
        self.put("v1/persistentvolumes", None, "pvc-1", {"metadata": {"name": "pvc-1"},
                 "spec": {"csi": {"volumeHandle": f"fakecluster/pve1/tenant-zfs/{volume}"}}})
        claim = self.get("v1/persistentvolumeclaims", "default", "csi-probe")
        claim.patch({"spec": {"volumeName": "pvc-1"}, "status": {"phase": "Bound"}})


@pytest.fixture
async def cluster(kmock: Any, fakepve: FakePve) -> AsyncIterator[Cluster]:
    for path, (kind, namespaced) in RESOURCES.items():
        kmock.resources[path] = kmock.ResourceInfo(
            kind=kind, namespaced=namespaced, verbs=["list", "get", "create", "delete", "patch", "watch"])
    fakepve.storages["tenant-zfs"] = {"type": "zfspool", "pool": "rpool/e2e", "active": 1,
                                      "content": "images,rootdir", "files": set()}
    fakepve.apitokens[TOKEN_ID] = SECRET
    fakepve.grant(TOKEN_ID, "/storage/tenant-zfs", "Datastore.Audit", "Datastore.Allocate")
    sim = Cluster(kmock, fakepve)

    async def loop() -> None:
        while True:
            sim.react()
            await asyncio.sleep(0.005)

    task = asyncio.create_task(loop())
    yield sim
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


class FastClock:
    """Real time, short polls: the waits are bounded in seconds the test can afford."""

    def monotonic(self) -> float:
        import time

        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        import time

        time.sleep(seconds)


async def run(cluster: Cluster, cafile: str, keep_tenant: bool = False, limit: float = 3.0) -> Report:
    docs = list(yaml.safe_load_all(render_fixture(FIXTURE, STAND)))
    mgmt = Kube.from_dict({
        "apiVersion": "v1", "kind": "Config", "current-context": "m",
        "clusters": [{"name": "m", "cluster": {"server": str(cluster.kmock.url).rstrip("/")}}],
        "users": [{"name": "m", "user": {"token": "mgmt"}}],
        "contexts": [{"name": "m", "context": {"cluster": "m", "user": "m"}}],
    }, timeout=5)
    pve = connect(Target(cluster.pve.url, TOKEN_ID, SECRET, ca_file=cafile))
    timeouts = Timeouts(kubeconfig=limit, nodes=limit, volume=limit, disk_gone=limit, tenant_gone=limit, poll=0.02)
    harness = Harness(mgmt, pve, docs, keep_tenant=keep_tenant, timeouts=timeouts, clock=FastClock())
    try:
        return await asyncio.to_thread(run_sequence, harness)
    finally:
        harness.close()


def statuses(report: Report) -> dict[str, Status]:
    return {r.check: r.status for r in report.rows}


async def test_the_whole_sequence_passes_and_leaves_nothing(cluster: Cluster, fakepve_cafile: str) -> None:
    report = await run(cluster, fakepve_cafile)
    assert set(statuses(report).values()) == {Status.PASS}, "\n".join(f"{r.check}: {r.seen}" for r in report.rows)
    assert list(statuses(report)) == ["create-tenant", "tenant-kubeconfig", "nodes-ready", "pvc-probe",
                                      "disk-on-hypervisor", "claim-deleted", "tenant-deleted"]
    assert cluster.get("tenantctl.io/v1alpha1/tenantclusters", NS, "e2e") is None
    assert cluster.volumes() == {}


async def test_keep_tenant_leaves_the_tenant(cluster: Cluster, fakepve_cafile: str) -> None:
    report = await run(cluster, fakepve_cafile, keep_tenant=True)
    assert report.exit_code == 0
    assert "--keep-tenant" in report.of("tenant-deleted")[0].seen
    assert cluster.get("tenantctl.io/v1alpha1/tenantclusters", NS, "e2e") is not None


Breaks = Callable[[Cluster], None]


@pytest.mark.parametrize(
    ("broken", "step", "seen"),
    [
        ("nodes", "nodes-ready", "timed out after 0.3s waiting for 2 Ready worker node(s); last seen: 0 of 2"),
        ("bind", "pvc-probe", "waiting for claim csi-probe to bind; last seen: claim absent"),
        ("read-back", "pvc-probe", "did not read back what was written"),
        ("disk", "disk-on-hypervisor", "is not on pve1"),
        ("vmid", "disk-on-hypervisor", f"vm-9999-pvc-1 is not named vm-{VMID}-pvc-"),
        ("free-disk", "claim-deleted", f"tenant-zfs:vm-{VMID}-pvc-1 still on pve1"),
    ],
    ids=["nodes never Ready", "claim never binds", "probe cannot read back", "disk only in the API",
         "volume without the controller vmid", "disk left after the claim"],
)
async def test_a_broken_reaction_fails_its_step_and_still_tears_down(
    cluster: Cluster, fakepve_cafile: str, broken: str, step: str, seen: str
) -> None:
    cluster.breaks.add(broken)
    report = await run(cluster, fakepve_cafile, limit=0.3)
    (row,) = report.of(step)
    assert row.status is Status.FAIL and seen in row.seen, row
    after = list(statuses(report))[list(statuses(report)).index(step) + 1:-1]
    assert all(statuses(report)[s] is Status.WARN for s in after)
    assert report.of("tenant-deleted")[0].status in (Status.PASS, Status.FAIL)
    assert cluster.get("tenantctl.io/v1alpha1/tenantclusters", NS, "e2e") is None
    assert report.exit_code == 1


async def test_a_leftover_tenant_is_not_touched(cluster: Cluster, fakepve_cafile: str) -> None:
    cluster.put("tenantctl.io/v1alpha1/tenantclusters", NS, "e2e",
                {"apiVersion": "tenantctl.io/v1alpha1", "kind": "TenantCluster",
                 "metadata": {"name": "e2e", "namespace": NS}})
    report = await run(cluster, fakepve_cafile, limit=0.5)
    assert report.of("create-tenant")[0].status is Status.FAIL
    assert "already exists" in report.of("create-tenant")[0].seen
    assert report.of("tenant-deleted") == []
    assert cluster.get("tenantctl.io/v1alpha1/tenantclusters", NS, "e2e") is not None


async def test_teardown_fails_when_a_volume_outlives_the_tenant(cluster: Cluster, fakepve_cafile: str) -> None:
    cluster.breaks.add("free-disk")
    report = await run(cluster, fakepve_cafile, limit=0.3)
    (row,) = report.of("tenant-deleted")
    assert row.status is Status.FAIL
    assert f"tenant-zfs:vm-{VMID}-pvc-1 remain on pve1" in row.seen


async def test_cli_runs_the_sequence_and_refuses_without_a_secret(
    cluster: Cluster, fakepve_cafile: str, tmp_path: Path
) -> None:
    fixture = tmp_path / "fixture.yaml"
    fixture.write_text(render_fixture(FIXTURE, STAND), encoding="utf-8")
    kubeconfig = tmp_path / "mgmt.conf"
    kubeconfig.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "m",
        "clusters": [{"name": "m", "cluster": {"server": str(cluster.kmock.url).rstrip("/")}}],
        "users": [{"name": "m", "user": {"token": "mgmt"}}],
        "contexts": [{"name": "m", "context": {"cluster": "m", "user": "m"}}],
    }), encoding="utf-8")
    args = ["e2e", "run", "-f", str(fixture), "--kubeconfig", str(kubeconfig), "--pve-url", cluster.pve.url,
            "--token-id", TOKEN_ID, "--ca-file", fakepve_cafile, "--poll", "0.02", "--keep-tenant", "-o", "json"]
    runner = CliRunner()
    refused = await asyncio.to_thread(runner.invoke, app, args, env={"PROXMOX_TOKEN_SECRET": ""})
    assert refused.exit_code == 2 and "PROXMOX_TOKEN_SECRET" in refused.stderr
    done = await asyncio.to_thread(runner.invoke, app, args, env={"PROXMOX_TOKEN_SECRET": SECRET})
    assert done.exit_code == 0, done.output
    rows = json.loads(done.stdout)["rows"]
    assert [r["status"] for r in rows] == ["PASS"] * 7
    assert SECRET not in done.output
