"""The contract check against the real upstream metadata.yaml tables (../shared/provider-metadata)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tenantctl.problems import Severity
from tenantctl.providers.contract import ContractSource, check_contracts, parse_release_series


def source(package: str, version: str, tables: Path | None = None, folder: str | None = None,
           claimed: str | None = None) -> ContractSource:
    text = (tables / folder / "metadata.yaml").read_text() if tables and folder else None
    return ContractSource(package, version, f"{package}.version", text, f"{folder}/metadata.yaml", claimed)


def test_capmox_v0_9_declares_v1beta2_which_core_v1_10_does_not_serve(metadata_tables: Path) -> None:
    core = source("core", "v1.10.1", metadata_tables, "cluster-api-v1.10.1")
    capmox = source("infrastructure-proxmox", "v0.9.0", metadata_tables, "capmox-v0.9.0")
    [problem] = check_contracts(core, [capmox])
    assert problem.path == "infrastructure-proxmox.version"
    assert "infrastructure-proxmox v0.9.0 declares contract v1beta2" in problem.message
    assert "release series 0.9 in capmox-v0.9.0/metadata.yaml" in problem.message
    assert "core v1.10.1 serves v1beta1" in problem.message


def test_capmox_v0_8_is_refused_too(metadata_tables: Path) -> None:
    core = source("core", "v1.10.1", metadata_tables, "cluster-api-v1.10.1")
    capmox = source("infrastructure-proxmox", "v0.8.2", metadata_tables, "capmox-v0.9.0")
    [problem] = check_contracts(core, [capmox])
    assert "declares contract v1beta2" in problem.message


@pytest.mark.parametrize(
    ("package", "version", "folder"),
    [("infrastructure-proxmox", "v0.7.7", "capmox-v0.7.7"), ("infrastructure-kubevirt", "v0.1.10", "capk-v0.1.10"),
     ("ipam-in-cluster", "v1.0.3", "caip-v1.0.3")],
)
def test_the_catalogue_releases_match_core(metadata_tables: Path, package: str, version: str, folder: str) -> None:
    core = source("core", "v1.10.1", metadata_tables, "cluster-api-v1.10.1")
    assert check_contracts(core, [source(package, version, metadata_tables, folder)]) == []


def test_a_version_outside_every_release_series_is_refused(metadata_tables: Path) -> None:
    core = source("core", "v1.10.1", metadata_tables, "cluster-api-v1.10.1")
    [problem] = check_contracts(core, [source("infrastructure-proxmox", "v0.10.0", metadata_tables, "capmox-v0.7.7")])
    assert "v0.10.0 matches no release series" in problem.message
    assert "(series: 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7)" in problem.message


def test_the_core_version_must_be_in_its_own_table(metadata_tables: Path) -> None:
    core = source("core", "v1.11.0", metadata_tables, "cluster-api-v1.10.1")
    [problem] = check_contracts(core, [])
    assert problem.path == "core.version"
    assert "core v1.11.0 matches no release series" in problem.message


@pytest.mark.parametrize(
    ("text", "reason"),
    [("releaseSeries: [", "malformed YAML"), ("kind: Metadata\n", "no releaseSeries table"),
     ("releaseSeries: []\n", "no releaseSeries table"),
     ("releaseSeries:\n- major: 0\n  minor: 7\n", "releaseSeries[0] needs major, minor and contract")],
)
def test_malformed_metadata_names_the_file(text: str, reason: str) -> None:
    table = "releaseSeries: [{major: 1, minor: 10, contract: v1beta1}]"
    core = ContractSource("core", "v1.10.1", "core.version", table)
    broken = ContractSource("ipam-in-cluster", "v0.7.1", "at", text, "vendor/ipam-in-cluster/metadata.yaml")
    [problem] = check_contracts(core, [broken])
    assert problem.path == "vendor/ipam-in-cluster/metadata.yaml"
    assert reason in problem.message
    with pytest.raises(ValueError, match=reason.split("[")[0]):
        parse_release_series(text)


def test_without_metadata_the_catalogue_claim_is_used() -> None:
    core = source("core", "v1.10.1", claimed="v1beta1")
    [problem] = check_contracts(core, [source("infrastructure-proxmox", "v0.7.7", claimed="v1beta2")])
    assert "declares contract v1beta2 (the tenantctl catalogue)" in problem.message


def test_an_unknown_contract_is_a_warning_not_a_pass() -> None:
    core = source("core", "v1.10.1", claimed="v1beta1")
    [problem] = check_contracts(core, [source("infrastructure-proxmox", "v0.9.0")])
    assert problem.severity is Severity.WARNING
    assert "contract of infrastructure-proxmox v0.9.0 not checked" in problem.message


def test_an_unknown_core_contract_is_a_warning() -> None:
    [problem] = check_contracts(source("core", "v1.11.0"), [source("ipam-in-cluster", "v1.0.3", claimed="v1beta1")])
    assert problem.severity is Severity.WARNING
    assert problem.path == "core.version"
