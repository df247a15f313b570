"""The README's spec reference says, per field, what a user may write: its type, default and meaning."""

from __future__ import annotations

import pytest

from tenantctl.spec.reference import spec_reference


def _row(path: str) -> list[str]:
    """The type, default and meaning cells of the reference row of `path`."""
    prefix = f"| `{path}` | "
    line = next(ln for ln in spec_reference().splitlines() if ln.startswith(prefix))
    return [cell.strip() for cell in line.removeprefix(prefix).removesuffix(" |").split(" | ")]


@pytest.mark.parametrize(
    ("path", "type_", "default"),
    [
        ("spec.proxmox.ipv4Config.prefix", "int", "required"),
        ("spec.proxmox.ipv4Config.addresses", "list[str]", "required"),
        ("spec.network.podCIDR", "str", "`10.243.0.0/16`"),
        ("spec.proxmox.csi.enabled", "bool", "`true`"),
        ("spec.controlPlane.resources.apiServer.requests.cpu", r"str \| int \| float", ""),
        ("spec.proxmox.csi.storageClasses", "list[object]", ""),
        ("spec.controlPlane.apiServer.extraArgs", "map", ""),
    ],
)
def test_each_row_gives_the_fields_type_and_default(path: str, type_: str, default: str) -> None:
    assert _row(path)[:2] == [type_, default]


def test_a_nested_object_is_followed_by_its_own_fields() -> None:
    assert _row("spec.network")[:2] == ["object", ""]
    assert _row("spec.network.serviceCIDR")[2] == "Service network; CoreDNS takes its 10th address."


def test_both_kinds_have_a_section() -> None:
    reference = spec_reference()
    assert reference.index("#### TenantCluster") < reference.index("#### NodePool")
    assert _row("spec.cluster")[1] == "required"
