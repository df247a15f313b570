"""IPv4 pool entries as CAIP's InClusterIPPool reads them: an IP, a CIDR or an `a-b` range."""

from __future__ import annotations

import bisect
import ipaddress
from dataclasses import dataclass

from tenantctl.spec.patterns import LITERAL_IP_CHARS, full_match

__all__ = ["AddressEntry", "is_literal_ip", "parse_address_entry", "usable_addresses"]

def is_literal_ip(value: str) -> bool:
    """True for a bare IPv4 or IPv6 address literal and nothing else."""
    if not full_match(LITERAL_IP_CHARS, value):
        return False
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class AddressEntry:
    """An inclusive range of IPv4 addresses, from one `addresses` entry."""

    first: ipaddress.IPv4Address
    last: ipaddress.IPv4Address

    def __len__(self) -> int:
        return int(self.last) - int(self.first) + 1


def parse_address_entry(entry: str) -> AddressEntry:
    """Parse `192.0.2.10`, `192.0.2.0/28` or `192.0.2.100-192.0.2.150`; ValueError names the shape wanted."""
    text = entry.strip()
    if "-" in text:
        start, _, end = text.partition("-")
        first = _ipv4(start.strip(), entry)
        last = _ipv4(end.strip(), entry)
        if int(last) < int(first):
            raise ValueError(f"range {entry!r} ends before it starts")
        return AddressEntry(first, last)
    if "/" in text:
        try:
            net = ipaddress.IPv4Network(text, strict=False)
        except ValueError:
            raise ValueError(f"{entry!r} is not an IPv4 CIDR") from None
        return AddressEntry(net.network_address, net.broadcast_address)
    addr = _ipv4(text, entry)
    return AddressEntry(addr, addr)


def _ipv4(text: str, entry: str) -> ipaddress.IPv4Address:
    if not full_match(LITERAL_IP_CHARS, text):
        raise ValueError(f"{entry!r} is not an IPv4 address, CIDR or a-b range")
    try:
        return ipaddress.IPv4Address(text)
    except ValueError:
        raise ValueError(f"{entry!r} is not an IPv4 address, CIDR or a-b range") from None


def usable_addresses(entries: list[AddressEntry], prefix: int, gateway: ipaddress.IPv4Address | None) -> int:
    """How many addresses CAIP can hand out: the entries' union, less the gateway and the subnet's
    network and broadcast addresses (CAIP skips those unless allocateReservedIPAddresses is set).
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
    host_bits = 32 - prefix
    if 2**host_bits > 2:
        mask = (2**32 - 1) ^ (2**host_bits - 1)
        for e in entries:
            for addr in (int(e.first), int(e.last)):
                reserved.update({addr & mask, (addr & mask) | (2**host_bits - 1)})
    total = sum(last - first + 1 for first, last in merged)
    starts = [first for first, _ in merged]
    taken = 0
    for r in reserved:
        i = bisect.bisect_right(starts, r) - 1
        taken += i >= 0 and r <= merged[i][1]
    return total - taken
