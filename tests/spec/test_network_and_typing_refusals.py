"""Refusals users hit first: networks that clash with the worker subnet, a LoadBalancer address the
worker pool can hand out, a version written as a YAML number, a kind in the wrong case. From the CLI:
exit 2, the field named, nothing rendered."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example
from tenantctl.cli import app

Docs = list[dict[str, Any]]
Mutation = Callable[[Docs], None]


def _cluster(docs: Docs) -> dict[str, Any]:
    return doc(docs, "TenantCluster")


def _set(path: str, value: Any) -> Mutation:
    """Set a dotted path under the TenantCluster (`spec.network.podCIDR`)."""

    def mutate(docs: Docs) -> None:
        *parents, last = path.split(".")
        node = _cluster(docs)
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = value

    return mutate


def _rename_pool_kind(kind: str) -> Mutation:
    def mutate(docs: Docs) -> None:
        doc(docs, "NodePool")["kind"] = kind

    return mutate


def render(tmp_path: Path, example: str, mutate: Mutation) -> Any:
    docs = clone(load_example(example))
    mutate(docs)
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, ["render", "-f", str(spec)])


def refusals(result: Any) -> dict[str, str]:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    return dict(line.split(": ", 1) for line in result.stderr.splitlines() if ": " in line)


REFUSED: dict[str, tuple[str, Mutation, str, str]] = {
    "podCIDR over the worker subnet": (
        "proxmox.yaml", _set("spec.network.podCIDR", "192.0.2.0/25"),
        "TenantCluster/acme.spec.network.podCIDR", "192.0.2.0/25 overlaps the worker subnet 192.0.2.0/24",
    ),
    "serviceCIDR around the worker subnet": (
        "proxmox.yaml", _set("spec.network.serviceCIDR", "192.0.0.0/16"),
        "TenantCluster/acme.spec.network.serviceCIDR", "192.0.0.0/16 overlaps the worker subnet 192.0.2.0/24",
    ),
    "podCIDR over a /32 worker subnet": (
        "proxmox.yaml",
        lambda docs: (_set("spec.proxmox.ipv4Config.prefix", 32)(docs),
                      _set("spec.network.podCIDR", "192.0.2.0/25")(docs)),
        "TenantCluster/acme.spec.network.podCIDR", "192.0.2.0/25 overlaps the worker subnet 192.0.2.1/32",
    ),
    "LoadBalancer address inside the worker pool": (
        "proxmox.yaml", _set("spec.expose", {"type": "LoadBalancer", "address": "192.0.2.150"}),
        "TenantCluster/acme.spec.expose.address",
        "192.0.2.150 is inside the worker address pool (spec.proxmox.ipv4Config.addresses[0] "
        "'192.0.2.100-192.0.2.150')",
    ),
    "version as a YAML number": (
        "kubevirt.yaml", _set("spec.version", 1.33),
        "TenantCluster/demo.spec.version", '1.33 is a YAML number, not a string; quote it ("v1.33")',
    ),
    "talos.version as a YAML number": (
        "proxmox.yaml", _set("spec.talos.version", 1.1),
        "TenantCluster/acme.spec.talos.version", '1.1 is a YAML number, not a string; quote it ("v1.1")',
    ),
    "kind in the wrong case": (
        "kubevirt.yaml", _rename_pool_kind("Nodepool"),
        "Nodepool/md0.kind", "did you mean 'NodePool'? (kinds are case-sensitive)",
    ),
}


@pytest.mark.parametrize(("example", "mutate", "path", "message"), REFUSED.values(), ids=REFUSED.keys())
def test_refused_with_the_field_named(
    tmp_path: Path, example: str, mutate: Mutation, path: str, message: str, snapshot: SnapshotAssertion
) -> None:
    found = refusals(render(tmp_path, example, mutate))
    assert path in found, found
    assert message in found[path]
    assert found == snapshot, "every problem, word for word"


def test_a_non_version_string_field_given_a_number_is_told_to_quote_it(tmp_path: Path) -> None:
    found = refusals(render(tmp_path, "kubevirt.yaml", _set("spec.controlPlane.dataStoreName", 12)))
    at = "TenantCluster/demo.spec.controlPlane.dataStoreName"
    assert found[at] == '12 is a YAML number, not a string; quote it ("12")'


ACCEPTED: dict[str, tuple[str, Mutation]] = {
    "LoadBalancer address in the subnet, outside the pool": (
        "proxmox.yaml", _set("spec.expose", {"type": "LoadBalancer", "address": "192.0.2.99"}),
    ),
    "pod and service CIDRs away from the worker subnet": (
        "proxmox.yaml", _set("spec.network.podCIDR", "192.0.3.0/24"),
    ),
    "the pool's last address plus one": (
        "proxmox.yaml", _set("spec.expose", {"type": "LoadBalancer", "address": "192.0.2.151"}),
    ),
}


@pytest.mark.parametrize(("example", "mutate"), ACCEPTED.values(), ids=ACCEPTED.keys())
def test_accepted_near_the_edges(tmp_path: Path, example: str, mutate: Mutation) -> None:
    result = render(tmp_path, example, mutate)
    assert result.exit_code == 0, result.stderr
