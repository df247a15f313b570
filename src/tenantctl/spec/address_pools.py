"""Worker address pools beyond the cluster's ipv4Config: its IPv6 half, and each further NIC's pools.

capmox hands a NIC an address from the InClusterIPPool its pool reference names and waits for a
claim that CAIP never fills when the pool is malformed or dry; so each family is checked as
ipv4Config is (entries parse, lie in the prefix, the gateway is on-prefix), and the render as a
whole is checked for two pools handing out one address on one network segment.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence
from dataclasses import dataclass

from tenantctl.problems import Problems
from tenantctl.spec.addresses import (
    AddressEntry,
    literal_ip,
    network,
    parse_address_entry,
    parsed_entries,
    usable_addresses,
)
from tenantctl.spec.nodepool import NodePool
from tenantctl.spec.placement import at_once_text, machines_at_once
from tenantctl.spec.tenant import TenantCluster

__all__ = [
    "FAMILIES",
    "WorkerPool",
    "check_address_overlaps",
    "check_address_pool",
    "check_device_capacity",
    "pool_usable",
    "worker_pools",
]

FAMILIES = {4: ("IPv4", 32), 6: ("IPv6", 128)}


def check_address_pool(
    base: str,
    addresses: Sequence[str],
    prefix: int,
    gateway: str | None,
    version: int,
    problems: Problems,
) -> None:
    """Entries of one family inside one /prefix; the gateway (when given) of that family and inside it."""
    family, width = FAMILIES[version]
    prefix_ok = 0 <= prefix <= width
    if not prefix_ok:
        problems.error(f"{base}.prefix", f"{prefix} is outside 0–{width} for {family}")
    gw: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    if gateway is not None:
        gw = literal_ip(gateway)
        if gw is None or gw.version != version:
            gw = None
            problems.error(f"{base}.gateway", f"{gateway!r} is not an {family} address")
    if not addresses:
        problems.error(f"{base}.addresses", "at least one address, CIDR or a-b range is required")
    subnet = network(f"{gw}/{prefix}", strict=False) if gw is not None and prefix_ok else None
    origin = "the gateway's subnet"
    for i, entry in enumerate(addresses):
        try:
            parsed = parse_address_entry(entry, version)
        except ValueError as exc:
            problems.error(f"{base}.addresses[{i}]", str(exc))
            continue
        if subnet is None and prefix_ok:
            subnet = network(f"{parsed.first}/{prefix}", strict=False)
            origin = f"the /{prefix} of addresses[{i}]"
        if subnet is not None and (parsed.first not in subnet or parsed.last not in subnet):
            problems.error(
                f"{base}.addresses[{i}]",
                f"{entry!r} is outside {subnet} ({origin}): one pool is one subnet, as CAIP allocates it",
            )


def pool_usable(addresses: Sequence[str], prefix: int, gateway: str | None, version: int) -> int | None:
    """Addresses CAIP can hand out from this pool, or None when it does not parse."""
    try:
        entries = [parse_address_entry(e, version) for e in addresses]
    except ValueError:
        return None
    if not 0 <= prefix <= FAMILIES[version][1]:
        return None
    gw = literal_ip(gateway) if gateway is not None else None
    if gw is not None and gw.version != version:
        return None
    return usable_addresses(entries, prefix, gw, version)


@dataclass(frozen=True)
class WorkerPool:
    """One address pool workers draw from, on the network segment (bridge, VLAN) its NIC sits on."""

    source: str
    segment: tuple[str, int | None]
    version: int
    entries: tuple[AddressEntry, ...]


def worker_pools(tc: TenantCluster, pools: Sequence[NodePool]) -> list[WorkerPool]:
    """Every pool a Proxmox tenant's workers take addresses from: the cluster's, on each segment its
    pools' default NIC uses, and each pool's further NICs'."""
    px = tc.spec.proxmox
    if tc.spec.substrate != "proxmox" or px is None:
        return []
    at = f"TenantCluster/{tc.metadata.namespace}/{tc.metadata.name}.spec.proxmox"
    out: list[WorkerPool] = []
    segments = {(p.spec.proxmox.network.bridge, p.spec.proxmox.network.vlan) for p in pools if p.spec.proxmox}
    for version, cfg in px.address_configs:
        entries = tuple(parsed_entries(cfg.addresses, version))
        out += [WorkerPool(f"{at}.ipv{version}Config", s, version, entries) for s in sorted(segments, key=str)]
    for pool in pools:
        ppx = pool.spec.proxmox
        if ppx is None:
            continue
        for i, dev in enumerate(ppx.network.additional_devices):
            base = (
                f"NodePool/{pool.metadata.namespace}/{pool.metadata.name}.spec.proxmox.network"
                f".additionalDevices[{i}]"
            )
            for version, dpool in dev.address_pools:
                out.append(WorkerPool(f"{base}.ipv{version}", (dev.bridge, dev.vlan), version,
                                      tuple(parsed_entries(dpool.addresses, version))))
    return out


def check_address_overlaps(pools: Sequence[WorkerPool], problems: Problems) -> None:
    """Two pools on one segment that share an address hand it to two VMs, and both answer ARP for it.
    Pools on different bridges or VLANs may reuse a range (isolated storage networks often do).

    One sweep per segment over the ranges sorted by start, holding the furthest-reaching range and the
    furthest-reaching one of another pool: O(n log n) in the ranges, whatever the input's shape."""
    by_segment: dict[tuple[tuple[str, int | None], int], list[tuple[int, int, WorkerPool]]] = {}
    for pool in pools:
        ranges = by_segment.setdefault((pool.segment, pool.version), [])
        ranges += [(int(e.first), int(e.last), pool) for e in pool.entries]
    reported: set[tuple[str, str]] = set()
    for (segment, version), ranges in by_segment.items():
        ranges.sort(key=lambda r: (r[0], r[1]))
        best: tuple[int, WorkerPool] | None = None
        runner_up: tuple[int, WorkerPool] | None = None
        for first, last, pool in ranges:
            other = best if best is not None and best[1].source != pool.source else runner_up
            if other is not None and other[0] >= first and (pool.source, other[1].source) not in reported:
                reported.add((pool.source, other[1].source))
                _overlap_error(pool, other[1], first, min(last, other[0]), segment, version, problems)
            if best is None or last > best[0]:
                if best is not None and best[1].source != pool.source:
                    runner_up = best
                best = (last, pool)
            elif pool.source != best[1].source and (runner_up is None or last > runner_up[0]):
                runner_up = (last, pool)


def _overlap_error(
    pool: WorkerPool,
    other: WorkerPool,
    first: int,
    last: int,
    segment: tuple[str, int | None],
    version: int,
    problems: Problems,
) -> None:
    start, end = (ipaddress.IPv4Address(n) if version == 4 else ipaddress.IPv6Address(n) for n in (first, last))
    shared = f"{start}" if start == end else f"{start}-{end}"
    bridge, vlan = segment
    on = f"bridge {bridge}" + (f" VLAN {vlan}" if vlan is not None else "")
    problems.error(
        f"{pool.source}.addresses",
        f"{shared} is also in {other.source} on {on}: two pools would hand one address to two VMs; "
        "make the ranges disjoint",
    )


def check_device_capacity(tc: TenantCluster, pool: NodePool, problems: Problems) -> None:
    """Each further NIC's pool must cover every machine the pool can have at once, surge included."""
    px = pool.spec.proxmox
    if px is None:
        return
    need = machines_at_once(pool, tc)
    for i, dev in enumerate(px.network.additional_devices):
        for version, dpool in dev.address_pools:
            have = pool_usable(dpool.addresses, dpool.prefix, dpool.gateway, version)
            if have is not None and have < need:
                problems.error(
                    f"NodePool/{pool.metadata.name}.spec.proxmox.network.additionalDevices[{i}].ipv{version}"
                    ".addresses",
                    f"{have} usable addresses, but {dev.name} of this pool's machines can need {need} at once "
                    f"({at_once_text(pool, tc)}); IPAM claims beyond the pool hang silently",
                )
