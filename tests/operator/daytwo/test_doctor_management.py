"""`tenantctl doctor management` against an emulated management cluster: complete, then one fault at a time."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from kube_emulator import Fault, KubeEmulator, declare
from operator_support import MANAGEMENT_KINDS, kamaji, kubeconfig_for
from pinning import pin, report_text
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.operator.daytwo.management import CONTROLLERS, NEEDS, doctor_management
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.operator.phases.talos_api import DEFAULT_KAMAJI
from tenantctl.proxmox.report import Report, Status

pytestmark = [pytest.mark.timeout(20)]

PROVIDERS = "operator.cluster.x-k8s.io/v1alpha2"


def _kinds() -> list[tuple[str, str, bool, tuple[str, ...]]]:
    served = {(path.rsplit("/", 1)[0], kind) for path, kind, _, _ in MANAGEMENT_KINDS}
    extra = [(f"{n.api_version}/{k.lower()}s", k, k not in ("Platform", "DataStore"), ())
             for n in NEEDS for k in n.kinds if (n.api_version, k) not in served]
    providers = [(f"{PROVIDERS}/{k.lower()}s", k, True, ("status",))
                 for k in ("CoreProvider", "InfrastructureProvider")]
    return [*extra, *providers]


def deployment(name: str, image: str = "registry.example/x:1", available: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "system", "labels": {"app.kubernetes.io/name": name}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "c", "image": image}]}}},
            "status": {"availableReplicas": available}}


def provider(kind: str, name: str, ready: bool) -> dict[str, Any]:
    status = "True" if ready else "False"
    return {"metadata": {"name": name, "namespace": f"{name}-system"},
            "status": {"installedVersion": "v1.10.1",
                       "conditions": [{"type": "Ready", "status": status, "reason": "" if ready else "Installing",
                                       "message": "" if ready else "waiting for the components"}]}}


def complete(mgmt: KubeEmulator, shared: Path) -> None:
    declare(mgmt, [*MANAGEMENT_KINDS, *_kinds()])
    kamaji(mgmt, shared / "crds")
    for _, names, _ in CONTROLLERS:
        for name in names:
            image = "ghcr.io/clastix/kamaji:26.6.5-edge" if name == "kamaji" else "registry.example/x:1"
            mgmt.put("apps/v1/deployments", deployment(name, image))
    mgmt.put(f"{PROVIDERS}/coreproviders", provider("CoreProvider", "cluster-api", True))
    mgmt.put(f"{PROVIDERS}/infrastructureproviders", provider("InfrastructureProvider", "proxmox", True))
    mgmt.put("kamaji.clastix.io/v1alpha1/datastores", {"metadata": {"name": "default"}, "spec": {}})


async def report_of(mgmt: KubeEmulator) -> Report:
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        report = await doctor_management(api)
    pin(report_text(report))
    return report


def failing(report: Report) -> dict[str, tuple[str, str]]:
    return {r.subject: (r.seen, r.advice) for r in report.rows if r.status is Status.FAIL}


async def test_a_complete_management_cluster_passes(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    report = await report_of(mgmt)
    assert failing(report) == {}, report.rows
    assert not report.failed and report.exit_code == 0
    [release] = [r for r in report.rows if r.check == "kamaji" and r.subject == "release"]
    assert release.status is Status.PASS
    assert release.seen.startswith("Kamaji 26.6.5-edge (observed: Deployment system/kamaji runs ghcr.io/clastix/kamaji")
    assert release.seen.endswith("serves Kubernetes up to v1.36")
    controllers = [r for r in report.rows if r.subject.startswith("Deployment ")]
    assert {r.check for r in controllers} == {"controllers"}
    assert len(controllers) == sum(len(names) for _, names, _ in CONTROLLERS)
    providers = [r for r in report.rows if r.check == "providers"]
    assert providers and all(r.seen == "Ready, v1.10.1" for r in providers), providers
    [kamaji_row] = [r for r in controllers if r.subject == "Deployment system/kamaji"]
    assert (kamaji_row.status, kamaji_row.seen.endswith(": 1/1 replicas available")) == (Status.PASS, True)


async def test_a_missing_crd_is_a_failure_naming_what_installs_it(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    del mgmt.resources[next(r for r, info in mgmt.resources.items() if info.kind == "TalosConfigTemplate")]
    report = await report_of(mgmt)
    assert {r.check for r in report.rows if r.status is Status.FAIL} == {"crds"}
    fails = failing(report)
    assert fails == {"bootstrap.cluster.x-k8s.io/v1alpha3 TalosConfigTemplate": (
        "CABPT (Talos bootstrap, v0.6): TalosConfigTemplate not served",
        "install its capi-operator provider (`tenantctl providers render -f platform.yaml`)")}


async def test_a_substrates_missing_crd_only_warns_naming_the_tenants_that_need_it(
    mgmt: KubeEmulator, shared: Path
) -> None:
    """A platform that runs no KubeVirt tenants need not install CAPK: a warning, not a failure."""
    complete(mgmt, shared)
    del mgmt.resources[next(r for r, info in mgmt.resources.items() if info.kind == "KubevirtMachineTemplate")]
    report = await report_of(mgmt)
    assert failing(report) == {}
    warned = {r.subject: (r.seen, r.advice) for r in report.rows if r.status is Status.WARN}
    assert warned == {"infrastructure.cluster.x-k8s.io/v1alpha1 KubevirtCluster, KubevirtMachineTemplate": (
        "CAPK (v0.1): KubevirtMachineTemplate not served",
        "needed by kubevirt tenants only: install its capi-operator provider "
        "(`tenantctl providers render -f platform.yaml`)")}


async def test_a_controller_without_its_replicas_or_scaled_to_zero_fails_naming_how_to_look(
    mgmt: KubeEmulator, shared: Path
) -> None:
    complete(mgmt, shared)
    mgmt.put("apps/v1/deployments", deployment("helm-controller", available=0))
    scaled_down = deployment("source-controller", available=0)
    scaled_down["spec"]["replicas"] = 0
    mgmt.put("apps/v1/deployments", scaled_down)
    assert failing(await report_of(mgmt)) == {
        "Deployment system/helm-controller": (
            "Flux helm-controller: 0/1 replicas available", "kubectl -n system describe deployment helm-controller"),
        "Deployment system/source-controller": (
            "Flux source-controller: 0/0 replicas available",
            "kubectl -n system describe deployment source-controller"),
    }


async def test_kamaji_without_its_crd_fails_saying_to_install_it(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    mgmt.fail(Fault("GET", "customresourcedefinitions", status=404, times=10, message="not found"))
    assert failing(await report_of(mgmt)) == {
        "tenantcontrolplanes.kamaji.clastix.io": ("no TenantControlPlane CRD", "install Kamaji")}


async def test_an_old_kamaji_warns_what_it_refuses_and_fails_without_the_trustd_field(
    mgmt: KubeEmulator, shared: Path
) -> None:
    complete(mgmt, shared)
    mgmt.put("apps/v1/deployments", deployment("kamaji", "ghcr.io/clastix/kamaji:edge-25.9.2"))
    kamaji(mgmt, shared / "crds", additional_ports=False)
    report = await report_of(mgmt)
    [release] = [r for r in report.rows if r.subject == "release"]
    assert release.status is Status.WARN and release.seen.endswith("serves Kubernetes up to v1.34")
    assert "v1.36 needs Kamaji 26.5.3-edge" in release.advice
    assert failing(report)["tenantcontrolplanes.kamaji.clastix.io"][1].startswith("upgrade Kamaji to 26.3.2-edge")


async def test_no_cert_manager_and_a_provider_not_ready_are_failures(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    for name in ("cert-manager", "cert-manager-webhook"):
        mgmt.objects["apps/v1/deployments", "system", name].delete()
    mgmt.put(f"{PROVIDERS}/infrastructureproviders", provider("InfrastructureProvider", "proxmox", False))
    fails = failing(await report_of(mgmt))
    assert fails["Deployment cert-manager"][0] == "cert-manager: no Deployment cert-manager"
    assert "webhook certificate" in fails["Deployment cert-manager-webhook"][1]
    assert fails["InfrastructureProvider proxmox-system/proxmox"] == (
        "not Ready: Installing waiting for the components",
        "kubectl -n proxmox-system describe infrastructureprovider proxmox")


async def test_the_command_prints_the_report_and_exits_1_on_a_failure(
    mgmt: KubeEmulator, shared: Path, tmp_path: Path
) -> None:
    complete(mgmt, shared)
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_for(str(mgmt.url).rstrip("/")))
    args = ["doctor", "management", "--kubeconfig", str(config), "-o", "json"]
    passed = await asyncio.to_thread(CliRunner().invoke, app, args)
    assert passed.exit_code == 0, passed.output
    assert json.loads(passed.stdout)["ok"] is True
    mgmt.objects["kamaji.clastix.io/v1alpha1/datastores", None, "default"].delete()
    failed = await asyncio.to_thread(CliRunner().invoke, app, args)
    assert failed.exit_code == 1
    rows = json.loads(failed.stdout)["rows"]
    assert [r["seen"] for r in rows if r["status"] == "FAIL"] == ["no DataStore"]


async def test_a_provider_without_any_ready_condition_says_so(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    mgmt.put(f"{PROVIDERS}/coreproviders", {"metadata": {"name": "cluster-api", "namespace": "capi-system"}})
    assert failing(await report_of(mgmt))["CoreProvider capi-system/cluster-api"] == (
        "not Ready: no Ready condition", "kubectl -n capi-system describe coreprovider cluster-api")


async def test_without_capi_operator_the_providers_row_warns_naming_its_api(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    for res in [r for r, info in mgmt.resources.items() if info.kind.endswith("Provider")]:
        del mgmt.resources[res]
    report = await report_of(mgmt)
    [row] = [r for r in report.rows if r.check == "providers"]
    assert (row.status, row.subject, row.seen) == (
        Status.WARN, "operator.cluster.x-k8s.io/v1alpha2", "capi-operator is not installed")
    assert row.advice == "providers installed another way are checked by their CRDs only"


async def test_a_kamaji_image_that_names_no_release_warns_and_assumes_the_default(
    mgmt: KubeEmulator, shared: Path
) -> None:
    complete(mgmt, shared)
    mgmt.put("apps/v1/deployments", deployment("kamaji", "ghcr.io/clastix/kamaji@sha256:" + "a" * 64))
    [release] = [r for r in (await report_of(mgmt)).rows if r.subject == "release"]
    assert (release.status, release.seen) == (
        Status.WARN, f"the Kamaji controller's image names no release; tenantctl assumes {DEFAULT_KAMAJI.release}")
    assert release.advice == "declare it in Platform spec.kamaji.version (or the operator's --kamaji-version)"


async def test_kamaji_without_a_datastore_fails_naming_the_datastores(mgmt: KubeEmulator, shared: Path) -> None:
    complete(mgmt, shared)
    mgmt.objects["kamaji.clastix.io/v1alpha1/datastores", None, "default"].delete()
    fails = failing(await report_of(mgmt))
    assert list(fails) == ["DataStores"] and fails["DataStores"][0] == "no DataStore"


async def test_deployments_that_cannot_be_listed_are_a_warning_and_the_rest_still_runs(
    mgmt: KubeEmulator, shared: Path
) -> None:
    complete(mgmt, shared)
    mgmt.fail(Fault("GET", "deployments", status=403, times=1, message="forbidden"))
    report = await report_of(mgmt)
    [row] = [r for r in report.rows if r.subject == "apps/v1 Deployments"]
    assert (row.check, row.status) == ("controllers", Status.WARN) and row.seen.startswith("cannot list: ")
    assert "403" in row.seen or "forbidden" in row.seen, row.seen
    assert row.advice == "grant list on deployments cluster-wide, or check the controllers by hand"
    assert any(r.check == "kamaji" for r in report.rows), "the checks after it still run"
