"""Where the workers land on the network and in Proxmox: pool, bridge, addresses, gateway, capacity."""

from __future__ import annotations

import ipaddress

from tenantctl.proxmox.checks._context import FAIL, PASS, WARN, Context, unreadable
from tenantctl.proxmox.checks.capacity import ours
from tenantctl.proxmox.inventory import config_ips
from tenantctl.proxmox.report import Row
from tenantctl.spec import TenantCluster
from tenantctl.spec.address_pools import pool_usable
from tenantctl.spec.addresses import parsed_entries
from tenantctl.spec.checks import pool_addresses
from tenantctl.spec.placement import machines_at_once

# ------------------------------------------------------------------ pool, network


def check_pool(ctx: Context) -> list[Row]:
    rows = unreadable("pool", ctx, "pools", "/pools")
    for name, spec in ctx.proxmox_pools:
        subject = f"NodePool/{name}"
        if spec.pool is None:
            rows.append(Row("pool", subject, WARN, "no proxmox.pool",
                            "without a pool every controller needs its privileges on /vms, i.e. on every VM "
                            "of the cluster; set pool: <tenant pool> for a per-tenant scope"))
        elif spec.pool in ctx.inv.pools:
            rows.append(Row("pool", subject, PASS, f"pool {spec.pool!r} exists"))
        else:
            rows.append(Row("pool", subject, FAIL, f"pool {spec.pool!r} does not exist or the token lacks "
                            "Pool.Audit on it", f"create it: `pveum pool add {spec.pool}`, then grant the tokens "
                            f"on /pool/{spec.pool}"))
    return rows


def check_bridges(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    px = ctx.tenant.spec.proxmox
    for name, spec in ctx.proxmox_pools:
        bridge, vlan = spec.network.bridge, spec.network.vlan
        for node in dict.fromkeys([*(px.allowed_nodes if px else []), spec.source_node]):
            if node not in ctx.inv.networks:
                continue
            ifaces = {str(i.get("iface")): i for i in ctx.inv.networks[node]}
            subject = f"NodePool/{name} on {node}"
            found = ifaces.get(bridge)
            if found is None or "bridge" not in str(found.get("type", "")).lower():
                bridges = ", ".join(sorted(k for k, v in ifaces.items() if "bridge" in str(v.get("type", "")).lower()))
                rows.append(Row("bridge", subject, FAIL,
                                f"no bridge {bridge!r} on {node} (bridges: {bridges or 'none'})",
                                f"create {bridge} on {node} or set network.bridge to one of its bridges"))
                continue
            note = ""
            if vlan is not None:
                aware = str(found.get("bridge_vlan_aware", "0")) in ("1", "true")
                note = f", vlan {vlan}" + ("" if aware else f" (not VLAN-aware: PVE creates {bridge}v{vlan})")
            rows.append(Row("bridge", subject, PASS, f"bridge {bridge} exists{note}"))
    return rows


# ------------------------------------------------------------------ IPAM


def _spec_addresses(tc: TenantCluster) -> list[ipaddress.IPv4Address]:
    px = tc.spec.proxmox
    addresses = px.ipv4_config.addresses if px and px.ipv4_config else []
    return [ipaddress.IPv4Address(i) for first, last in _ranges(addresses) for i in range(first, last + 1)]


def _used_addresses(ctx: Context) -> dict[str, list[str]]:
    """Addresses other guests hold; the tenant's own workers (by owner tag) hold theirs from the pool."""
    inv = ctx.inv
    used: dict[str, list[str]] = {}
    for vm in inv.vms:
        if ours(vm, ctx):
            continue
        vmid = int(vm["vmid"])
        kind = "CT" if vm.get("type") == "lxc" else "VM"
        for ip in {*config_ips(inv.configs.get(vmid, {})), *inv.agent_ips.get(vmid, [])}:
            used.setdefault(ip, []).append(f"{kind} {vmid} {vm.get('name', '')!r} on {vm.get('node')}")
    return used


def check_ipam(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    if px is None or px.ipv4_config is None:
        return []
    rows = unreadable("ipam", ctx, "resources", "/cluster/resources")
    used = _used_addresses(ctx)
    clashes = [(str(a), used[str(a)]) for a in _spec_addresses(ctx.tenant) if str(a) in used]
    for ip, owners in clashes:
        rows.append(Row("ipam", ip, FAIL, f"{ip} in ipv4Config.addresses is already used by {', '.join(owners)}",
                        "remove it from spec.proxmox.ipv4Config.addresses (CAIP would hand it to a worker and "
                        "both would answer ARP), or free it"))
    unasked = sorted(k.rsplit(" ", 1)[-1] for k in ctx.inv.errors if k.startswith("guest agent of VM"))
    if not clashes and unasked:
        rows.append(Row("ipam", "ipv4Config.addresses", WARN,
                        f"no clash among the {len(ctx.inv.vms)} VMs visible, but the guest agents of VMs "
                        f"{', '.join(unasked)} could not be asked",
                        "grant the doctor's token VM.GuestAgent.Audit on /vms to see their addresses"))
    elif not clashes:
        rows.append(Row("ipam", "ipv4Config.addresses", PASS,
                        f"none of the addresses is used by the {len(ctx.inv.vms)} VMs visible "
                        f"({len(ctx.inv.agent_ips)} answered through the guest agent)"))
    rows += _gateway_rows(ctx)
    rows += _capacity_rows(ctx, len(clashes))
    rows += _device_rows(ctx, used)
    return rows


def _gateway_rows(ctx: Context) -> list[Row]:
    """The spec has already refused a gateway that is no IPv4 address or off-prefix for an address
    (`spec.checks`), so what is left to check is whether the bridge carries that subnet."""
    px = ctx.tenant.spec.proxmox
    assert px is not None and px.ipv4_config is not None
    cfg = px.ipv4_config
    subnet = ipaddress.IPv4Network(f"{cfg.gateway}/{cfg.prefix}", strict=False)
    mismatched = []
    for name, spec in ctx.proxmox_pools:
        for node, ifaces in ctx.inv.networks.items():
            bridge = next((i for i in ifaces if i.get("iface") == spec.network.bridge), None)
            cidr = str((bridge or {}).get("cidr") or "")
            if cidr and not spec.network.vlan and ipaddress.ip_interface(cidr).network != subnet:
                mismatched.append(f"{spec.network.bridge} on {node} is {cidr} (NodePool/{name})")
    if mismatched:
        return [Row("gateway", cfg.gateway, WARN, f"the worker subnet is {subnet} but " + "; ".join(mismatched),
                    "check that the bridge carries the workers' subnet, or set network.vlan")]
    return [Row("gateway", cfg.gateway, PASS, f"on-prefix for every address ({subnet})")]


def _capacity_rows(ctx: Context, clashes: int) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    assert px is not None
    have = pool_addresses(px)
    if have is None:
        return []
    need = sum(machines_at_once(p, ctx.tenant) for p in ctx.pools)
    free = have - clashes
    status = PASS if need <= free else FAIL
    advice = "" if status is PASS else "add addresses to spec.proxmox.ipv4Config.addresses or shrink the pools"
    return [Row("capacity", "ipv4Config.addresses", status,
                f"{free} free of {have} usable; the pools can claim {need} at once (replicas + surge)", advice)]


def _device_rows(ctx: Context, used: dict[str, list[str]]) -> list[Row]:
    """Each further NIC's IPv4 pool: free addresses (less those other guests hold) for the pool's machines."""
    rows: list[Row] = []
    for pool in ctx.pools:
        px = pool.spec.proxmox
        if px is None:
            continue
        need = machines_at_once(pool, ctx.tenant)
        for dev in px.network.additional_devices:
            if dev.ipv4 is None:
                continue
            have = pool_usable(dev.ipv4.addresses, dev.ipv4.prefix, dev.ipv4.gateway, 4)
            if have is None:
                continue
            ranges = _ranges(dev.ipv4.addresses)
            taken = sorted(ip for ip in used if _within(ip, ranges))
            free = have - len(taken)
            subject = f"NodePool/{pool.metadata.name} {dev.name}"
            seen = f"{free} free of {have} usable; the pool's machines need {need} at once (replicas + surge)"
            if taken:
                seen += f"; held by other guests: {', '.join(taken[:5])}" + (" …" if len(taken) > 5 else "")
            if free < need:
                rows.append(Row("capacity", subject, FAIL, seen,
                                f"add addresses to {dev.name}'s ipv4.addresses or free them: CAIP hands out "
                                "what it holds and the next claim hangs"))
            else:
                rows.append(Row("capacity", subject, PASS, seen))
    return rows


def _ranges(addresses: list[str]) -> list[tuple[int, int]]:
    """A pool's IPv4 entries as integer ranges, parsed once."""
    return [(int(e.first), int(e.last)) for e in parsed_entries(addresses)]


def _within(ip: str, ranges: list[tuple[int, int]]) -> bool:
    try:
        n = int(ipaddress.IPv4Address(ip))
    except ValueError:  # a config's `ip=` that is no address holds none
        return False
    return any(first <= n <= last for first, last in ranges)
