"""The catalogue is data; these tests are what keeps that data coherent and true to upstream."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tenantctl.providers.catalogue import Enablement, load_catalogue
from tenantctl.providers.contract import parse_release_series

CATALOGUE = load_catalogue()

# The releases the issue asks for, and the GitHub project publishing each one.
EXPECTED = {
    "core": ("v1.10.1", "kubernetes-sigs/cluster-api", "core-components.yaml"),
    "bootstrap-talos": ("v0.6.12", "siderolabs/cluster-api-bootstrap-provider-talos", "bootstrap-components.yaml"),
    "controlplane-kamaji": ("v0.19.0", "clastix/cluster-api-control-plane-provider-kamaji",
                            "control-plane-components.yaml"),
    "infrastructure-kubevirt": ("v0.1.10", "kubernetes-sigs/cluster-api-provider-kubevirt",
                                "infrastructure-components.yaml"),
    "infrastructure-proxmox": ("v0.7.7", "ionos-cloud/cluster-api-provider-proxmox", "infrastructure-components.yaml"),
    "ipam-in-cluster": ("v1.0.3", "kubernetes-sigs/cluster-api-ipam-provider-in-cluster", "ipam-components.yaml"),
}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_package_points_at_its_real_release_assets(name: str) -> None:
    version, project, asset = EXPECTED[name]
    package = CATALOGUE.get(name)
    base = f"https://github.com/{project}/releases/download/{version}"
    assert package.version == version
    assert package.components_url(version) == f"{base}/{asset}"
    assert package.metadata_url(version) == f"{base}/metadata.yaml"


def test_package_names_are_the_ones_users_write() -> None:
    assert CATALOGUE.names == tuple(EXPECTED)


def test_only_proxmox_and_ipam_are_opt_in() -> None:
    opt_in = {p.name for p in CATALOGUE.packages if p.enablement is Enablement.OPT_IN}
    assert opt_in == {"infrastructure-proxmox", "ipam-in-cluster"}


def test_proxmox_needs_ipam_and_credentials() -> None:
    proxmox = CATALOGUE.get("infrastructure-proxmox")
    assert "ipam-in-cluster" in proxmox.dependencies
    assert [p.name for p in CATALOGUE.packages if p.credentials] == ["infrastructure-proxmox"]


def test_dependencies_name_known_packages_and_form_no_cycle() -> None:
    for package in CATALOGUE.packages:
        seen: set[str] = set()
        stack = list(package.dependencies)
        while stack:
            dep = stack.pop()
            assert dep in CATALOGUE.names, f"{package.name} depends on unknown {dep}"
            assert dep != package.name, f"{package.name} depends on itself"
            if dep not in seen:
                seen.add(dep)
                stack.extend(CATALOGUE.get(dep).dependencies)


def test_every_provider_is_named_as_capi_operator_expects() -> None:
    """capi-operator's preflight refuses a CoreProvider not named cluster-api."""
    assert CATALOGUE.core.provider == "cluster-api"
    assert len({(p.kind, p.provider) for p in CATALOGUE.packages}) == len(CATALOGUE.packages)
    assert all(re.fullmatch(r"[a-z0-9-]+", p.namespace) for p in CATALOGUE.packages)


def test_patches_have_unique_ids_and_say_why() -> None:
    ids = [p.id for pkg in CATALOGUE.packages for p in pkg.patches]
    assert len(ids) == len(set(ids))
    assert all(p.why.strip() for pkg in CATALOGUE.packages for p in pkg.patches)


def test_the_two_required_patches_are_declared() -> None:
    assert [p.id for p in CATALOGUE.get("core").patches] == ["capi-controller-manager-startup-probe"]
    assert [p.id for p in CATALOGUE.get("bootstrap-talos").patches] == ["cabpt-dedicated-service-account"]


@pytest.mark.parametrize(
    ("name", "folder"),
    [("core", "cluster-api-v1.10.1"), ("infrastructure-kubevirt", "capk-v0.1.10"),
     ("infrastructure-proxmox", "capmox-v0.7.7"), ("ipam-in-cluster", "caip-v1.0.3")],
)
def test_declared_contract_matches_the_real_metadata_table(name: str, folder: str, metadata_tables: Path) -> None:
    package = CATALOGUE.get(name)
    table = parse_release_series((metadata_tables / folder / "metadata.yaml").read_text())
    major, minor = (int(x) for x in package.version.lstrip("v").split(".")[:2])
    assert [s.contract for s in table if (s.major, s.minor) == (major, minor)] == [package.contract]
