"""Refusals of `spec.expose`, from the CLI: exit 2, every field named; accepted ones validate."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example
from tenantctl.cli import app

Docs = list[dict[str, Any]]


def run(tmp_path: Path, docs: Docs, *args: str) -> Any:
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, [*args, "-f", str(spec)])


def with_expose(example: str, expose: dict[str, Any]) -> Docs:
    docs = clone(load_example(example))
    doc(docs, "TenantCluster")["spec"]["expose"] = expose
    return docs


def refused_at(result: Any) -> dict[str, str]:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    return dict(line.split(": ", 1) for line in result.stderr.splitlines() if ": " in line)


EXPOSE_CASES: dict[str, tuple[str, dict[str, Any], dict[str, str]]] = {
    "Ingress without hostname": (
        "kubevirt.yaml", {"type": "Ingress"}, {"TenantCluster/demo.spec.expose.hostname": "required for type Ingress"},
    ),
    "ClusterIP on proxmox": (
        "proxmox.yaml", {"type": "ClusterIP"}, {"TenantCluster/acme.spec.expose.type": "refused on substrate proxmox"},
    ),
    "sourceRanges not CIDRs": (
        "kubevirt.yaml",
        {"type": "LoadBalancer", "loadBalancerSourceRanges": ["203.0.113.0/24", "10.0.0.1", "10.0.0.1/8", "any"]},
        {
            "TenantCluster/demo.spec.expose.loadBalancerSourceRanges[1]": "'10.0.0.1' is not a network CIDR",
            "TenantCluster/demo.spec.expose.loadBalancerSourceRanges[2]": "'10.0.0.1/8' is not a network CIDR",
            "TenantCluster/demo.spec.expose.loadBalancerSourceRanges[3]": "'any' is not a network CIDR",
        },
    ),
    "address not an IPv4 literal": (
        "kubevirt.yaml", {"type": "LoadBalancer", "address": "api.example.com"},
        {"TenantCluster/demo.spec.expose.address": "not an IPv4 address literal"},
    ),
    "address IPv6": (
        "kubevirt.yaml", {"type": "LoadBalancer", "address": "2001:db8::1"},
        {"TenantCluster/demo.spec.expose.address": "not an IPv4 address literal"},
    ),
    "load-balancer fields on an Ingress": (
        "kubevirt.yaml",
        {"type": "Ingress", "hostname": "api.example.com", "loadBalancerClass": "metallb",
         "loadBalancerSourceRanges": ["10.0.0.0/8"], "address": "192.0.2.10"},
        {
            "TenantCluster/demo.spec.expose.loadBalancerClass": "does not apply to type Ingress",
            "TenantCluster/demo.spec.expose.loadBalancerSourceRanges": "does not apply to type Ingress",
            "TenantCluster/demo.spec.expose.address": "does not apply to type Ingress",
        },
    ),
    "ingress class on a LoadBalancer": (
        "proxmox.yaml", {"ingressClassName": "nginx"},
        {"TenantCluster/acme.spec.expose.ingressClassName": "does not apply to type LoadBalancer"},
    ),
    "any field on a ClusterIP": (
        "kubevirt.yaml", {"hostname": "api.example.com", "address": "192.0.2.10"},
        {
            "TenantCluster/demo.spec.expose.hostname": "does not apply to type ClusterIP",
            "TenantCluster/demo.spec.expose.address": "does not apply to type ClusterIP",
        },
    ),
    "hostname with a port": (
        "kubevirt.yaml", {"type": "Ingress", "hostname": "api.example.com:443"},
        {"TenantCluster/demo.spec.expose.hostname": "is not a DNS name"},
    ),
    "hostname that is an address": (
        "kubevirt.yaml", {"type": "Ingress", "hostname": "192.0.2.10"},
        {"TenantCluster/demo.spec.expose.hostname": "an IP goes in address"},
    ),
    "empty classes": (
        "kubevirt.yaml", {"type": "LoadBalancer", "loadBalancerClass": ""},
        {"TenantCluster/demo.spec.expose.loadBalancerClass": "must not be empty"},
    ),
    "unknown type": (
        "kubevirt.yaml", {"type": "NodePort"}, {"TenantCluster/demo.spec.expose.type": "NodePort"},
    ),
}


@pytest.mark.parametrize("case", EXPOSE_CASES.values(), ids=EXPOSE_CASES.keys())
def test_expose_refusal(
    case: tuple[str, dict[str, Any], dict[str, str]], tmp_path: Path, snapshot: SnapshotAssertion
) -> None:
    example, expose, expected = case
    found = refused_at(run(tmp_path, with_expose(example, expose), "render"))
    for path, fragment in expected.items():
        assert path in found, f"no problem at {path}: {found}"
        assert fragment in found[path]
    assert found == snapshot, "every problem, word for word"


@pytest.mark.parametrize(
    ("example", "expose"),
    [
        ("kubevirt.yaml", {"type": "ClusterIP"}),
        ("kubevirt.yaml", {"type": "Ingress", "hostname": "demo.example.com", "ingressClassName": "tenants"}),
        ("kubevirt.yaml", {"type": "LoadBalancer", "hostname": "demo.example.com", "loadBalancerClass": "metallb",
                           "loadBalancerSourceRanges": ["203.0.113.0/24", "2001:db8::/32"], "address": "192.0.2.10"}),
        ("proxmox.yaml", {}),
        ("proxmox.yaml", {"type": "Ingress", "hostname": "acme.example.com"}),
    ],
)
def test_accepted_expose_renders_a_valid_control_plane(
    example: str, expose: dict[str, Any], tmp_path: Path, shared: Path
) -> None:
    result = run(tmp_path, with_expose(example, expose), "validate", "--crds", str(shared / "crds"))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("ok: ") and "not checked" not in result.stderr
