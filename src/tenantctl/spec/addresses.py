"""Pool entries as CAIP's InClusterIPPool reads them: an IP, a CIDR or an `a-b` range, of one family."""

from __future__ import annotations

import bisect
import functools
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass

from tenantctl.spec.patterns import LITERAL_IP_CHARS, full_match

__all__ = [
    "Address", "AddressEntry", "is_literal_ip", "literal_ip", "literal_ipv4", "network", "parse_address_entry",
    "parsed_entries", "usable_addresses",
]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@functools.lru_cache(maxsize=4096)
def literal_ip(value: str) -> Address | None:
    """The address a bare IPv4 or IPv6 literal spells, else None. Cached: one render reads the same
    gateway, endpoint and DNS address in several checks, and the operator renders every tenant each
    resync; `ipaddress` parses in pure Python (a tenth of a render before)."""
    if not full_match(LITERAL_IP_CHARS, value):
        return None
    try:
        return ipaddress.ip_address(value)
    except ValueError:
        return None


def literal_ipv4(value: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a bare literal spells, else None (an IPv6 literal too)."""
    found = literal_ip(value)
    return found if isinstance(found, ipaddress.IPv4Address) else None


@functools.lru_cache(maxsize=4096)
def network(text: str, strict: bool = True) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """`ipaddress.ip_network(text, strict=strict)`, cached as `literal_ip` is; raises its ValueError."""
    return ipaddress.ip_network(text, strict=strict)


def is_literal_ip(value: str) -> bool:
    """True for a bare IPv4 or IPv6 address literal and nothing else."""
    return literal_ip(value) is not None

_FAMILY_NAME = {4: "IPv4", 6: "IPv6"}


@dataclass(frozen=True)
class AddressEntry:
    """An inclusive range of addresses of one family, from one `addresses` entry."""

    first: Address
    last: Address

    def __len__(self) -> int:
        return int(self.last) - int(self.first) + 1


def parse_address_entry(entry: str, version: int = 4) -> AddressEntry:
    """Parse `192.0.2.10`, `192.0.2.0/28` or `192.0.2.100-192.0.2.150` (or their IPv6 forms with
    `version=6`); ValueError names the shape wanted."""
    text = entry.strip()
    family = _FAMILY_NAME[version]
    if "-" in text:
        start, _, end = text.partition("-")
        first = _address(start.strip(), entry, version)
        last = _address(end.strip(), entry, version)
        if int(last) < int(first):
            raise ValueError(f"range {entry!r} ends before it starts")
        return AddressEntry(first, last)
    if "/" in text:
        try:
            net = network(text, strict=False)
        except ValueError:
            raise ValueError(f"{entry!r} is not an {family} CIDR") from None
        if net.version != version:
            raise ValueError(f"{entry!r} is not an {family} CIDR")
        return AddressEntry(net.network_address, net.broadcast_address)
    addr = _address(text, entry, version)
    return AddressEntry(addr, addr)


def parsed_entries(addresses: Iterable[str], version: int = 4) -> list[AddressEntry]:
    """The entries that parse, for comparing pools; those that do not are refused by their own checks."""
    out = []
    for entry in addresses:
        try:
            out.append(parse_address_entry(entry, version))
        except ValueError:
            continue
    return out


def _address(text: str, entry: str, version: int) -> Address:
    addr = literal_ip(text)
    if addr is None or addr.version != version:
        raise ValueError(f"{entry!r} is not an {_FAMILY_NAME[version]} address, CIDR or a-b range")
    return addr


def usable_addresses(entries: list[AddressEntry], prefix: int, gateway: Address | None, version: int = 4) -> int:
    """How many addresses CAIP can hand out: the entries' union, less the gateway and the network address
    of the lowest entry's /prefix (IPv6: its anycast address) and, for IPv4, its broadcast address. CAIP
    v1.0.3 (`poolutil.PoolSpecToIPSet`) reserves those whatever the prefix, so a /31 or /32 pool (IPv6:
    /128) has none to give and a /127 one; proven against its pool controller (tests/real/test_upstream_ipam.py).
    O(n log n) in the entries: a reserved address is looked up in the merged ranges by bisection."""
    merged: list[tuple[int, int]] = []
    for first, last in sorted((int(e.first), int(e.last)) for e in entries):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    reserved: set[int] = set()
    if gateway is not None:
        reserved.add(int(gateway))
    width = 32 if version == 4 else 128
    host_bits = width - prefix
    if merged:
        mask = (2**width - 1) ^ (2**host_bits - 1)
        reserved.add(merged[0][0] & mask)
        if version == 4:
            reserved.add((merged[0][0] & mask) | (2**host_bits - 1))
    total = sum(last - first + 1 for first, last in merged)
    starts = [first for first, _ in merged]
    taken = 0
    for r in reserved:
        i = bisect.bisect_right(starts, r) - 1
        taken += i >= 0 and r <= merged[i][1]
    return total - taken
