"""Whether the pools' VMs fit on their nodes, counted as capmox v0.7.7's scheduler counts.

capmox refuses a clone when the VM's memory exceeds a node's reservable memory: the node's total times
`schedulerHints.memoryAdjustment` percent (default 100; 0 turns the check off), less the `maxmem` of
every VM and container on it, templates aside (`GetReservableMemoryBytes`). It never looks at cores;
Proxmox refuses to start a VM with more vCPUs than the host has. A rotation adds each MachineDeployment's
maxSurge on top of its replicas, so that is what must fit. The tenant's own VMs (tagged
`tenant.<namespace>.<cluster>`) are not counted as used: they are the machines being counted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.proxmox.checks._context import FAIL, PASS, WARN, Context, resolve_template
from tenantctl.proxmox.report import Row
from tenantctl.render.proxmox import tenant_tag
from tenantctl.render.sizing import capmox_memory_mib, num_cores
from tenantctl.spec import NodePool
from tenantctl.spec.placement import NodeGroup, machines_at_once, node_groups, pool_nodes

__all__ = ["check_cores", "check_memory", "ours", "vm_size"]

_MIB = 2**20
_GIB = 2**30


@dataclass(frozen=True)
class VmSize:
    memory: int
    """Bytes capmox reserves for one VM of the pool."""
    cores: int


def vm_size(pool: NodePool, ctx: Context) -> VmSize | None:
    """One VM of the pool: the spec's resources, else what the template it clones from has."""
    res, px = pool.spec.resources, pool.spec.proxmox
    config: Mapping[str, Any] = {}
    if px is not None and (res.memory is None or res.cpu is None):
        vm = resolve_template(px, ctx.inv, ctx.tenant.spec.talos.version)
        if vm is None:
            return None
        config = ctx.inv.configs.get(int(vm["vmid"]), {})
    memory = capmox_memory_mib(res.memory) if res.memory is not None else _int(config.get("memory"), 512)
    cores = num_cores(res.cpu) if res.cpu is not None else _int(config.get("cores"), 1) * _int(config.get("sockets"), 1)
    return VmSize(memory * _MIB, cores)


def _int(value: object, default: int) -> int:
    try:
        return int(str(value).split(",")[0]) if value is not None else default
    except ValueError:
        return default


def _gib(n: int) -> str:
    return f"{n / _GIB:.1f} GiB"


def ours(vm: Mapping[str, Any], ctx: Context) -> bool:
    """A VM of this tenant, by its owner tag (pools with ownerTags: false are not recognised)."""
    return tenant_tag(ctx.tenant) in str(vm.get("tags") or "").split(";")


def _reservable(ctx: Context, adjustment: int) -> dict[str, tuple[int, int, int]]:
    """Per online node: (reservable bytes, total bytes, bytes held by other guests)."""
    held: dict[str, int] = {}
    for vm in ctx.inv.vms:
        if vm.get("template") or ours(vm, ctx):
            continue
        held[str(vm.get("node"))] = held.get(str(vm.get("node")), 0) + int(vm.get("maxmem") or 0)
    out = {}
    for node, stats in ctx.inv.node_stats.items():
        total = int(stats.get("maxmem") or 0)
        out[node] = (max(0, total * adjustment // 100 - held.get(node, 0)), total, held.get(node, 0))
    return out


def check_memory(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    hints = px.scheduler_hints if px else None
    adjustment = hints.memory_adjustment if hints is not None and hints.memory_adjustment is not None else 100
    if adjustment == 0:
        return [Row("memory", "schedulerHints.memoryAdjustment", WARN, "0: capmox places VMs without a memory check",
                    "set memoryAdjustment (100 = a node's memory) so a full node is refused at clone time")]
    free = _reservable(ctx, adjustment)
    remaining = {node: reservable for node, (reservable, _, _) in free.items()}
    wants: list[tuple[NodePool, VmSize, list[NodeGroup]]] = []
    for pool in ctx.pools:
        size = vm_size(pool, ctx)
        if pool.spec.proxmox is not None and size is not None:
            wants.append((pool, size, node_groups(pool, ctx.tenant)))
    rows: list[Row] = []
    # Spread groups are pinned to their node: they are placed first, where they must go.
    for pool, size, groups in wants:
        surge = pool.spec.rolling_update.max_surge
        for group in groups:
            if group.node is None or group.node not in remaining:
                continue
            need = group.at_once(surge) * size.memory
            remaining[group.node] -= need
            rows.append(_node_row(f"NodePool/{pool.metadata.name} on {group.node}", group.node, need,
                                  f"{group.ceiling}+{group.surge(surge)} VMs × {_gib(size.memory)}",
                                  free[group.node], remaining[group.node], adjustment))
    # Unspread pools: capmox puts each VM on an allowed node with room; count how many fit.
    for pool, size, groups in wants:
        if groups and groups[0].node is not None:
            continue
        nodes = [n for n in pool_nodes(pool, ctx.tenant) if n in remaining]
        rows.append(_pool_row(pool, nodes, machines_at_once(pool, ctx.tenant), size, remaining))
    return rows


def _node_row(subject: str, node: str, need: int, what: str, free: tuple[int, int, int], left: int,
              adjustment: int) -> Row:
    reservable, total, held = free
    seen = (f"needs {_gib(need)} ({what}); {_gib(reservable)} reservable on {node} "
            f"({adjustment}% of {_gib(total)}, less {_gib(held)} held by other guests)")
    if left < 0:
        return Row("memory", subject, FAIL, seen,
                   f"free {_gib(-left)} on {node} (move or shrink guests), lower the pool's memory or replicas, "
                   "or spread it over more nodes: capmox fails the clone with InsufficientMemory")
    return Row("memory", subject, PASS, seen)


def _pool_row(pool: NodePool, nodes: list[str], count: int, size: VmSize, remaining: dict[str, int]) -> Row:
    subject = f"NodePool/{pool.metadata.name}"
    fits = 0
    for node in sorted(nodes, key=lambda n: -remaining[n]):
        take = min(count - fits, max(0, remaining[node]) // size.memory) if size.memory else count - fits
        remaining[node] -= take * size.memory
        fits += take
    seen = (f"{count} VMs × {_gib(size.memory)} (replicas + surge) over {', '.join(nodes) or 'no online node'}: "
            f"{fits} fit")
    if fits < count:
        return Row("memory", subject, FAIL, seen,
                   "free memory on those nodes, add nodes to allowedNodes, or lower the pool's memory or replicas: "
                   "capmox fails the clones that do not fit with InsufficientMemory")
    return Row("memory", subject, PASS, seen)


def check_cores(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    for pool in ctx.pools:
        size = vm_size(pool, ctx)
        if pool.spec.proxmox is None or size is None:
            continue
        nodes = [n for n in pool_nodes(pool, ctx.tenant) if n in ctx.inv.node_stats]
        small = [(n, int(ctx.inv.node_stats[n].get("maxcpu") or 0)) for n in nodes
                 if int(ctx.inv.node_stats[n].get("maxcpu") or 0) < size.cores]
        subject = f"NodePool/{pool.metadata.name}"
        if small:
            listed = ", ".join(f"{n} has {c}" for n, c in small)
            rows.append(Row("cores", subject, FAIL, f"a VM gets {size.cores} vCPUs; {listed}",
                            "lower resources.cpu or narrow allowedNodes to larger hosts: Proxmox refuses to start "
                            "a VM with more vCPUs than its host (\"MAX ... vcpus allowed per VM on this node\")"))
        else:
            rows.append(Row("cores", subject, PASS, f"{size.cores} vCPUs per VM fit every node of the pool"))
    return rows
