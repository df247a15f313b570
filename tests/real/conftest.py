"""The real-API tier: one real management control plane and one real tenant API server per test session.

Built by `make envtest` (hack/envtest): etcd, kube-apiserver and kube-controller-manager from their own
Go modules. The management cluster holds every upstream CRD tenantctl renders against and what
`tenantctl install --apply` puts there; the tenant API server shares the etcd under its own prefix
(as Kamaji's tenants share a DataStore). Tests isolate by namespace. Nothing here is skipped: a
machine without the binaries builds them (the build script is the fixture's first step).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "operator"))

from real_api import Api, crd_documents
from real_control_plane import ControlPlane, binaries
from tenantctl.cli import app

REPO = Path(__file__).resolve().parents[2]
OPERATOR_NAMESPACE = "tenantctl-system"
OPERATOR_SA = "tenantctl-operator"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if Path(str(item.fspath)).is_relative_to(here):
            item.add_marker(pytest.mark.realapi)


@pytest.fixture(scope="session")
def envtest_bin() -> Path:
    return binaries()


@pytest.fixture(scope="session")
def management(tmp_path_factory: pytest.TempPathFactory, envtest_bin: Path) -> Iterator[ControlPlane]:
    plane = ControlPlane(tmp_path_factory.mktemp("management"), envtest_bin)
    try:
        yield plane.start()
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def tenant_planes(tmp_path_factory: pytest.TempPathFactory, envtest_bin: Path,
                  management: ControlPlane) -> Iterator[Callable[[], ControlPlane]]:
    """Starts a tenant's API server: a kube-apiserver of its own on the management etcd, under a prefix of
    its own (as Kamaji's tenants share a DataStore). Each tenant gets one, as in a real cluster: tenants
    on one API server would see each other's bootstrap tokens and node RBAC."""
    started: list[ControlPlane] = []

    def start() -> ControlPlane:
        plane = ControlPlane(tmp_path_factory.mktemp("tenant"), envtest_bin, controller_manager=False,
                             etcd_url=management.etcd_url, etcd_prefix=f"/tenant-{len(started)}")
        started.append(plane)
        return plane.start()

    try:
        yield start
    finally:
        for plane in started:
            plane.stop()


@pytest.fixture()
def tenant_plane(tenant_planes: Callable[[], ControlPlane]) -> Iterator[ControlPlane]:
    """This test's tenant API server, stopped when the test ends."""
    plane = tenant_planes()
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture(scope="session")
def shared_tenant_admin(tenant_planes: Callable[[], ControlPlane]) -> Api:
    """One tenant API server for tests that only ask it to judge objects (dry runs)."""
    plane = tenant_planes()
    return Api(plane.server, plane.admin)


def _upstream_crds(shared: Path) -> list[Path]:
    return sorted((shared / "crds").glob("*/*.yaml"))


@pytest.fixture(scope="session")
def admin(management: ControlPlane) -> Api:
    return Api(management.server, management.admin)


@pytest.fixture(scope="session")
def installed(admin: Api, management: ControlPlane, shared: Path) -> dict[str, list[str]]:
    """Every upstream CRD, then `tenantctl install --apply` as a platform admin runs it; the CRD names.

    The install's ValidatingWebhookConfiguration points at a Service no pod backs (there is no kubelet):
    with `failurePolicy: Fail` every tenant write would be refused, so it is removed here, and the
    webhook tests register it again pointed at the operator's webhook served on loopback.
    """
    upstream = admin.install_crds(crd_documents(_upstream_crds(shared)))
    for namespace in ("tenant-acme", "tenant-demo"):  # the examples', created before `install -f` names them
        admin.namespace(namespace)
    result = CliRunner().invoke(app, ["install", "--apply", "--kubeconfig", str(management.admin_kubeconfig_path),
                                      "-f", str(REPO / "examples" / "proxmox.yaml"),
                                      "-f", str(REPO / "examples" / "kubevirt.yaml")])
    assert result.exit_code == 0, result.output
    ours = [c["metadata"]["name"] for c in admin.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            if c["metadata"]["name"] not in upstream]
    admin.delete("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", None, OPERATOR_SA)
    return {"upstream": upstream, "ours": ours, "install_output": [result.output]}


@pytest.fixture()
def tenant_admin(tenant_plane: ControlPlane) -> Api:
    return Api(tenant_plane.server, tenant_plane.admin)
