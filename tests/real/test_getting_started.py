"""docs/getting-started.md, executed: every block marked `run`, in order, as a shell runs it (issue 38).

On the real management API server, with the kubectl `make kubectl` built and the tenantctl of this
checkout on PATH. The components that have no process here are played by writing what they write,
between the steps, as the rest of the real-API tier does: the controllers' Deployments and Kamaji's
DataStore before the doctor, Kamaji's Service and Secrets once the tenant is applied. The operator runs
as its ServiceAccount. Blocks marked `not run` must say why; a block with no mark fails the test.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from operator_support import FAST
from pytest_httpserver import HTTPServer

from crd_support import serve_upstream_crds
from real_api import Api
from real_control_plane import ControlPlane
from real_seed import eventually, operator_connection, running_operator, seed_control_plane
from tenant_support import load_example

pytestmark = [pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "getting-started.md"
MARK = re.compile(r"<!-- (run|not run): ([^>]*?) -->\n```sh\n(.*?)```", re.S)
KAMAJI_IMAGE = "clastix/kamaji:26.3.6-edge"
CONTROLLERS = (("flux-system", "helm-controller", "fluxcd/helm-controller:v1.6.3"),
               ("flux-system", "source-controller", "fluxcd/source-controller:v1.9.1"),
               ("cert-manager", "cert-manager", "jetstack/cert-manager-controller:v1.21.1"),
               ("cert-manager", "cert-manager-webhook", "jetstack/cert-manager-webhook:v1.21.1"),
               ("kamaji-system", "kamaji", KAMAJI_IMAGE))


@dataclass(frozen=True)
class Block:
    run: bool
    label: str
    """The step's name when run, why not when not."""
    script: str


def blocks(text: str) -> list[Block]:
    return [Block(mode == "run", label.strip(), script) for mode, label, script in MARK.findall(text)]


def test_every_shell_block_of_the_page_says_whether_it_runs() -> None:
    text = PAGE.read_text()
    assert len(blocks(text)) == text.count("```sh"), "a ```sh block without a run / not run mark"
    assert all(b.label for b in blocks(text) if not b.run), "a block not run must say why"


def _kubectl() -> Path:
    done = subprocess.run(["bash", str(REPO / "hack" / "kubectl" / "build.sh")], check=True, capture_output=True,
                          text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def _play_controllers(admin: Api) -> None:
    """What installing the prerequisites leaves: their controllers' Deployments, available, and Kamaji's
    default DataStore (pointing at the test's etcd)."""
    for namespace, name, image in CONTROLLERS:
        admin.namespace(namespace)
        labels = {"app.kubernetes.io/name": name}
        admin.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": namespace},
                     "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                              "template": {"metadata": {"labels": labels},
                                           "spec": {"containers": [{"name": "manager", "image": image}]}}}},
                    manager="helm")
        admin.merge_status("apps/v1", "Deployment", namespace, name,
                           {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1, "updatedReplicas": 1})
    admin.apply({"apiVersion": "kamaji.clastix.io/v1alpha1", "kind": "DataStore", "metadata": {"name": "default"},
                 "spec": {"driver": "etcd", "endpoints": ["127.0.0.1:2379"], "tlsConfig": {
                     "certificateAuthority": {"certificate": _secret_key("ca.crt"),
                                              "privateKey": _secret_key("ca.key")},
                     "clientCertificate": {"certificate": _secret_key("tls.crt"),
                                           "privateKey": _secret_key("tls.key")}}}},
                manager="helm")


def _unplay_controllers(admin: Api) -> None:
    for namespace, name, _ in CONTROLLERS:
        admin.delete("apps/v1", "Deployment", namespace, name)
    admin.delete("kamaji.clastix.io/v1alpha1", "DataStore", None, "default")


async def _no_example_tenants(admin: Api, management: ControlPlane) -> None:
    """The page starts from a cluster with no tenant: one an earlier test left (its operator stopped) is
    torn down first, by the operator, so none of its objects is there either."""
    namespaces = ("tenant-demo", "tenant-acme")
    if not any(admin.list("tenantctl.io/v1alpha1", "TenantCluster", ns) for ns in namespaces):
        return
    async with running_operator(operator_connection(management), FAST):
        for ns in namespaces:
            for kind in ("NodePool", "TenantCluster"):
                for obj in admin.list("tenantctl.io/v1alpha1", kind, ns):
                    admin.delete("tenantctl.io/v1alpha1", kind, ns, obj["metadata"]["name"])
        await eventually(lambda: not any(admin.list("tenantctl.io/v1alpha1", "TenantCluster", ns) for ns in namespaces),
                         120, what="the earlier tests' tenants torn down")


def _forget_the_page(admin: Api) -> None:
    """The page's Secrets and the Events its tenants left go with it: later tests find tenant-acme and
    tenant-demo as they expect them (a teardown test reads the first Teardown Event of its tenant)."""
    for name in ("capmox-acme", "pve-ccm-acme", "pve-csi-acme"):
        admin.delete("v1", "Secret", "tenant-acme", name)
    for ns, name in (("tenant-acme", "acme"), ("tenant-demo", "demo")):
        for event in admin.list("v1", "Event", ns):
            if event["involvedObject"].get("name") == name:
                admin.delete("v1", "Event", ns, event["metadata"]["name"])


def _secret_key(key: str) -> dict[str, Any]:
    return {"secretReference": {"name": "etcd-certs", "namespace": "kamaji-system", "keyPath": key}}


def _run(script: str, env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=240)
    assert done.returncode == 0, f"{script}\nexit {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done.stdout


async def test_the_getting_started_page_runs_as_written(
    installed: Any, admin: Api, management: ControlPlane, tenant_plane: ControlPlane,
    tenant_planes: Callable[[], ControlPlane], shared: Path, httpserver: HTTPServer, tmp_path: Path,
) -> None:
    work = tmp_path / "checkout"
    shutil.copytree(REPO / "examples", work / "examples")
    env = {**os.environ,
           "PATH": f"{_kubectl()}{os.pathsep}{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "KUBECONFIG": str(management.admin_kubeconfig_path), "HOME": str(tmp_path / "home"),
           "TENANTCTL_CRDS_MIRROR": serve_upstream_crds(httpserver, shared),
           "TENANTCTL_CRDS_CACHE": str(tmp_path / "crds"),
           **{f"PVE_{c}_TOKEN": f"{c.lower()}-token-secret" for c in ("CAPMOX", "CCM", "CSI")}}
    env.pop("KUBERNETES_SERVICE_HOST", None)
    said: dict[str, str] = {}

    def after_install() -> None:
        # The webhook configuration `install --apply` writes points at the operator's pod, which has no
        # kubelet here: with failurePolicy Fail every tenant write would be refused (as in `installed`).
        admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None,
                     "tenantctl-operator")

    def after_apply_started() -> None:
        seed_control_plane(admin, load_example("kubevirt.yaml"), tenant_plane)

    acme_plane = tenant_planes()

    def proxmox_kamaji() -> None:
        # Kamaji's Service (with the address the cloud gives it) and Secrets; the capmox Secret is the page's.
        seed_control_plane(admin, load_example("proxmox.yaml"), acme_plane, capmox_secret=False)

    before: dict[str, Callable[[], None]] = {"doctor": lambda: _play_controllers(admin),
                                             "apply": after_apply_started, "proxmox-tenant": proxmox_kamaji}
    after: dict[str, Callable[[], None]] = {"install": after_install, "proxmox-secrets": after_install}
    page = [b for b in blocks(PAGE.read_text()) if b.run]
    assert [b.label for b in page] == ["crds", "doctor", "install", "judge", "apply", "watch", "use", "delete",
                                       "proxmox-secrets", "proxmox-tenant", "proxmox-delete"]
    await _no_example_tenants(admin, management)
    try:
        async with running_operator(operator_connection(management), FAST):
            for block in page:
                if block.label in before:
                    before[block.label]()
                said[block.label] = await asyncio.to_thread(_run, block.script, env, work)
                if block.label in after:
                    after[block.label]()
    finally:
        _unplay_controllers(admin)
        _forget_the_page(admin)
        acme_plane.stop()
    assert "downloaded" in said["crds"]
    assert re.search(r"PASS: \d+ WARN: \d+ FAIL: 0", said["doctor"]), said["doctor"]
    assert said["judge"].startswith("ok: ") and "create" in said["judge"], said["judge"]
    assert re.search(r"tenant-demo\s+demo\s+kubevirt\s+v1\.33\s+Ready", said["watch"]), said["watch"]
    assert "kube-system" in said["use"]
    assert admin.get("tenantctl.io/v1alpha1", "TenantCluster", "tenant-demo", "demo") is None
    assert "ok: no credential reaches a tenant" in said["proxmox-tenant"], said["proxmox-tenant"]
    assert "TenantCluster tenant-acme/acme: phase Ready" in said["proxmox-tenant"], said["proxmox-tenant"]
    assert admin.get("tenantctl.io/v1alpha1", "TenantCluster", "tenant-acme", "acme") is None
