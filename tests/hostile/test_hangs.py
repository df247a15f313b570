"""Inputs that once ran for minutes: refused at the door, or scanned in linear time."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from hostile_support import dump, invoke
from tenant_support import clone, doc, load_example
from tenantctl.audit import audit_objects
from tenantctl.documents import INPUT_LIMITS
from tenantctl.spec.addresses import parse_address_entry, usable_addresses

KV = load_example("kubevirt.yaml")
PX = load_example("proxmox.yaml")

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9) if prev else ', '.join(['lol'] * 9)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh", strict=True)
)


@pytest.mark.timeout(20)
def test_a_billion_laughs_in_an_identity_field_is_refused_unexpanded(tmp_path: Path) -> None:
    text = BOMB + "apiVersion: tenantctl.io/v1alpha1\nkind: *h\n"
    line = invoke(["render", "-f", "t.yaml"], {"t.yaml": text}, tmp_path).refusal_at("t.yaml:2:")
    assert "alias *a refused" in line


def test_a_single_alias_is_refused_too(tmp_path: Path) -> None:
    """All aliases, not only large ones: a spec is small, and a shared node is never what a user means."""
    docs = clone(KV)
    text = dump(docs).replace("  name: demo\n", "  name: &n demo\n", 1).replace("  cluster: demo\n", "  cluster: *n\n")
    assert "alias *n refused" in invoke(["render", "-f", "t.yaml"], {"t.yaml": text}, tmp_path).stderr


def test_an_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    text = dump(KV) + "#" * INPUT_LIMITS.file_bytes
    line = invoke(["render", "-f", "t.yaml"], {"t.yaml": text}, tmp_path).refusal_at("t.yaml")
    assert f"larger than {INPUT_LIMITS.file_bytes} bytes" in line


@pytest.mark.timeout(20)
def test_an_oversized_string_is_refused_with_its_line(tmp_path: Path) -> None:
    docs = clone(KV)
    doc(docs, "TenantCluster")["metadata"]["labels"] = {"x": "a" * (INPUT_LIMITS.string_chars + 1)}
    line = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path).refusal_at("t.yaml:")
    assert f"at most {INPUT_LIMITS.string_chars}" in line


@pytest.mark.timeout(60)
def test_addresses_beyond_the_list_bound_are_refused_by_count(tmp_path: Path) -> None:
    docs = clone(PX)
    cfg = doc(docs, "TenantCluster")["spec"]["proxmox"]["ipv4Config"]
    cfg["addresses"] = [f"10.{i >> 8 & 255}.{i & 255}.1" for i in range(INPUT_LIMITS.items + 1)]
    line = invoke(["render", "-f", "t.yaml"], {"t.yaml": dump(docs)}, tmp_path).refusal_at("t.yaml:")
    assert f"{INPUT_LIMITS.items + 1} entries" in line


@pytest.mark.timeout(30)
def test_address_capacity_is_not_quadratic_in_entries() -> None:
    entries = [parse_address_entry(f"10.{i >> 8 & 255}.{i & 255}.1") for i in range(50_000)]
    # each /24 holds one address, none of them reserved: all 50,000 are usable
    assert usable_addresses(entries, 24, ipaddress.IPv4Address("10.0.0.254")) == 50_000


def test_reserved_addresses_are_still_subtracted() -> None:
    entries = [parse_address_entry("192.0.2.0/29"), parse_address_entry("192.0.2.16-192.0.2.20")]
    # CAIP reserves the network .0 and broadcast .7 of the lowest address's /29, and the gateway .1; .16,
    # the network of another /29, it hands out (the spec refuses a pool spanning two subnets before this
    # count is asked; CAIP's own count: tests/real/test_upstream_ipam.py)
    assert usable_addresses(entries, 29, ipaddress.IPv4Address("192.0.2.1")) == 8 - 3 + 5


@pytest.mark.timeout(30)
@pytest.mark.parametrize(
    "text",
    ["a" * 1_000_000, "a" * 500_000 + "@" + "b" * 499_999, "a@" * 500_000, "PVE:" * 250_000, "0-" * 500_000],
    ids=["run", "one-at", "many-at", "ticket-prefixes", "uuid-like"],
)
def test_audit_scans_a_megabyte_string_in_linear_time(text: str) -> None:
    obj = {"kind": "ConfigMap", "metadata": {"name": "x", "namespace": "y"}, "data": {"k": text}}
    findings = audit_objects([obj], [obj], [], ["credential-value"])
    assert all("PVEAPIToken" not in p.message for p in findings)
