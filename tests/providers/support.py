"""Helpers for the provider tests: synthetic releases, the loopback upstream, platform documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner, Result

from tenantctl.cli import app
from tenantctl.providers.catalogue import Package


def real_metadata(tables: Path, folder: str) -> bytes:
    return (tables / folder / "metadata.yaml").read_bytes()


def _deployment(name: str, namespace: str, container: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{
        "name": container,
        "image": f"example.invalid/{name}:dev",
        "args": ["--diagnostics-address=${CAPI_DIAGNOSTICS_ADDRESS:=:8443}"],
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": "healthz"}},
    }]}
    spec.update(extra or {})
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": {"spec": spec}},
    }


def _binding(kind: str, name: str, namespace: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": namespace} if kind == "RoleBinding" else {"name": name}
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": kind,
        "metadata": meta,
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{name}-role"},
        "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": namespace}],
    }


def synthetic_components(package: Package, version: str) -> bytes:
    """A small release file shaped like the upstream one where the declared patches look."""
    ns = package.namespace
    docs: list[dict[str, Any]] = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}]
    deployment_names = {"core": "capi-controller-manager", "bootstrap-talos": "cabpt-controller-manager"}
    docs.append(_deployment(deployment_names.get(package.name, f"{package.provider}-controller-manager"), ns,
                            package.container))
    if package.name == "bootstrap-talos":
        docs.append(_binding("ClusterRoleBinding", "cabpt-manager-rolebinding", ns))
        docs.append(_binding("RoleBinding", "cabpt-leader-election-rolebinding", ns))
    body = "".join("---\n" + yaml.safe_dump(d, sort_keys=False) for d in docs)
    return f"# {package.name} {version}: synthetic release for tests\n{body}".encode()


def synthetic_metadata(version: str, contract: str = "v1beta1") -> bytes:
    major, minor = version.lstrip("v").split(".")[:2]
    return (
        "apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3\nkind: Metadata\nreleaseSeries:\n"
        f"  - major: {major}\n    minor: {minor}\n    contract: {contract}\n"
    ).encode()


@dataclass
class Upstream:
    """Files served by path; tests edit `files` to simulate an upstream that changed or vanished."""

    server: HTTPServer
    files: dict[str, bytes] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)

    @property
    def mirror(self) -> str:
        return self.server.url_for("/").rstrip("/")

    def publish(self, package: Package, version: str, components: bytes | None = None,
                metadata: bytes | None = None) -> None:
        self.files[urlsplit(package.components_url(version)).path] = (
            components if components is not None else synthetic_components(package, version))
        self.files[urlsplit(package.metadata_url(version)).path] = (
            metadata if metadata is not None else synthetic_metadata(version, package.contract))

    def set(self, url: str, data: bytes) -> None:
        self.files[urlsplit(url).path] = data


PROXMOX_ON = {
    "bundles": {"enabledPackages": ["infrastructure-proxmox"]},
    "packages": {"infrastructure-proxmox": {"credentialsSecret": {"name": "capmox-credentials"}}},
}


def platform_document(spec: dict[str, Any] | None = None, name: str = "default") -> dict[str, Any]:
    return {"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": name},
            "spec": spec if spec is not None else {}}


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Cli:
    runner: CliRunner

    def __call__(self, *args: str | Path, env: dict[str, str] | None = None) -> Result:
        return self.runner.invoke(app, [str(a) for a in args], env=env, catch_exceptions=False)


def load_all(text: str) -> list[dict[str, Any]]:
    """Parse rendered YAML with libyaml: renders carry megabyte-sized base64 blobs."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [d for d in yaml.load_all(text, Loader=loader) if d]
