"""The small parsers the refusals stand on: quantities, address entries, pool capacity, literal IPs."""

from __future__ import annotations

import ipaddress
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tenantctl.spec.addresses import is_literal_ip, parse_address_entry, usable_addresses
from tenantctl.spec.quantity import QuantityError, parse_quantity


@pytest.mark.parametrize(
    ("text", "value"),
    [("1500m", Decimal("1.5")), ("2", Decimal(2)), ("8G", Decimal(8 * 10**9)), ("8Gi", Decimal(8 * 2**30)),
     ("1e9", Decimal(10**9)), ("0.5", Decimal("0.5")), (3, Decimal(3))],
)
def test_quantities(text: str, value: Decimal) -> None:
    assert parse_quantity(text) == value


@pytest.mark.parametrize("text", ["2x", "", "G", "1.2.3", "--1", "1 G"])
def test_not_quantities(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


@pytest.mark.parametrize("value", ["192.0.2.1", "2001:db8::1", "::1"])
def test_literal_ips(value: str) -> None:
    assert is_literal_ip(value)


@pytest.mark.parametrize("value", ["$(id)", "`id`", "1.2.3.4 ", "dns.google", "fe80::1%eth0", "1.2.3", ""])
def test_not_literal_ips(value: str) -> None:
    assert not is_literal_ip(value)


def test_address_entry_shapes() -> None:
    assert len(parse_address_entry("192.0.2.10")) == 1
    assert len(parse_address_entry("192.0.2.0/28")) == 16
    assert len(parse_address_entry("192.0.2.100-192.0.2.150")) == 51
    with pytest.raises(ValueError, match="ends before it starts"):
        parse_address_entry("192.0.2.9-192.0.2.1")


def test_capacity_excludes_gateway_network_and_broadcast() -> None:
    gw = ipaddress.IPv4Address("192.0.2.1")
    # CAIP infers the subnet from the prefix: in a /28, .0 and .15 are network and broadcast.
    assert usable_addresses([parse_address_entry("192.0.2.0/28")], 28, gw) == 13
    # In a /24 the same 16 addresses lose only .0 (network) and .1 (gateway).
    assert usable_addresses([parse_address_entry("192.0.2.0/28")], 24, gw) == 14
    # A range clear of all three keeps every address.
    assert usable_addresses([parse_address_entry("192.0.2.100-192.0.2.150")], 24, gw) == 51
    # Overlapping entries count once.
    entries = [parse_address_entry("192.0.2.100-192.0.2.150"), parse_address_entry("192.0.2.140-192.0.2.160")]
    assert usable_addresses(entries, 24, gw) == 61


@given(st.integers(min_value=0, max_value=2**32 - 1), st.integers(min_value=0, max_value=300))
def test_capacity_of_a_range_is_its_length_less_reserved(start: int, length: int) -> None:
    """Under a /32 the lowest address is its own network and broadcast address: CAIP reserves it once
    (the allocator's own count: tests/real/test_upstream_ipam.py), and nothing else of the range."""
    end = min(start + length, 2**32 - 1)
    first, last = ipaddress.IPv4Address(start), ipaddress.IPv4Address(end)
    entry = parse_address_entry(f"{first}-{last}")
    count = usable_addresses([entry], 32, None)
    assert count == end - start


def test_a_value_is_shown_whole_up_to_80_characters_and_cut_after() -> None:
    from tenantctl.spec.errors import shown

    exact = "x" * 78  # repr adds the two quotes: 80 characters
    assert shown(exact) == repr(exact)
    longer = "x" * 79
    assert shown(longer) == f"{repr(longer)[:80]}… (81 characters)"


def test_pool_usable_counts_what_caip_hands_out_in_either_family() -> None:
    from tenantctl.spec.address_pools import pool_usable

    assert pool_usable(["192.0.2.0/28"], 28, "192.0.2.1", 4) == 13  # less network, broadcast, gateway
    assert pool_usable(["192.0.2.0/28"], 28, None, 4) == 14
    assert pool_usable(["2001:db8::/124"], 124, "2001:db8::1", 6) == 14  # less the anycast and the gateway
    assert pool_usable(["2001:db8::/124"], 124, None, 6) == 15
    assert pool_usable(["192.0.2.0/28"], 28, "2001:db8::1", 4) is None, "a gateway of the other family"
    assert pool_usable(["192.0.2.0/28"], 33, None, 4) is None
    assert pool_usable(["192.0.2.0/28"], -1, None, 4) is None
    assert pool_usable(["not an address"], 24, None, 4) is None


@pytest.mark.parametrize(("number", "value"), [(1.5, Decimal("1.5")), (0.25, Decimal("0.25")), (2.0, Decimal(2))])
def test_a_yaml_float_is_its_decimal_text(number: float, value: Decimal) -> None:
    """`cpu: 1.5` in YAML arrives as a float; it is read through its shortest text, not its binary value."""
    assert parse_quantity(number) == value


@pytest.mark.parametrize("number", [float("inf"), float("-inf"), float("nan")])
def test_a_non_finite_float_is_not_a_quantity(number: float) -> None:
    with pytest.raises(QuantityError, match="is not a finite quantity"):
        parse_quantity(number)


@pytest.mark.parametrize("value", [True, None, [1], {"cpu": 1}])
def test_other_yaml_values_are_not_quantities(value: object) -> None:
    with pytest.raises(QuantityError, match="is not a quantity"):
        parse_quantity(value)
