"""What `tenantctl plan` says of the live address pools: will the machines this input can hold get an address.

`validate` counts a pool's addresses from the spec; the live InClusterIPPool knows what CAIP has handed
out (`status.ipAddresses`), leaked claims included. The machines that run now hold one address each, so
the input can claim `machines at once − machines now` more, and CAIP must have that many free or the
rest stay pending with no error on the Machine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.operator.kube.client import KubeClient
from tenantctl.render import Names
from tenantctl.render.meta import POOL_LABEL
from tenantctl.render.proxmox import CAIP_API
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.placement import machines_at_once

__all__ = ["address_warnings", "capmox_pool_name", "machines_of"]

Obj = Mapping[str, Any]


def capmox_pool_name(cluster: TenantCluster, version: int) -> str:
    """The pool capmox v0.7.7 makes from ipv4Config/ipv6Config (`ipam.InClusterPoolFormat`)."""
    return f"{cluster.metadata.name}-v{version}-icip"


def machines_of(md: Obj) -> int:
    """The machines a MachineDeployment holds now: its status says, its spec until it has one."""
    workers = (md.get("status") or {}).get("replicas")
    if workers is None:
        workers = (md.get("spec") or {}).get("replicas", 0)
    return int(workers or 0)


def _running(machine_deployments: Sequence[Obj], pool: str | None = None) -> int:
    """Machines the MachineDeployments (of one pool, or all) hold now."""
    return sum(machines_of(md) for md in machine_deployments
               if pool is None or (md["metadata"].get("labels") or {}).get(POOL_LABEL) == pool)


async def address_warnings(
    api: KubeClient, cluster: TenantCluster, pools: Sequence[NodePool], machine_deployments: Sequence[Obj]
) -> list[str]:
    """One line per live pool that cannot cover what the input can claim; nothing when CAIP is not served."""
    if cluster.spec.substrate != "proxmox" or cluster.spec.proxmox is None:
        return []
    res = await api.resource(CAIP_API, "InClusterIPPool")
    if res is None:
        return []
    names = Names(cluster)
    wanted: list[tuple[str, int, int]] = []
    everything = sum(machines_at_once(p, cluster) for p in pools)
    px = cluster.spec.proxmox
    for version, _ in px.address_configs:
        wanted.append((capmox_pool_name(cluster, version), everything, _running(machine_deployments)))
    for pool in pools:
        ppx = pool.spec.proxmox
        for dev in ppx.network.additional_devices if ppx else []:
            for version, _ in dev.address_pools:
                wanted.append((names.address_pool(pool, dev.name, version), machines_at_once(pool, cluster),
                               _running(machine_deployments, pool.metadata.name)))
    lines: list[str] = []
    for name, need, held in wanted:
        live = await api.get(res, name, names.namespace)
        counts = ((live or {}).get("status") or {}).get("ipAddresses") or {}
        if "free" not in counts:
            continue
        free, more = int(counts["free"]), max(0, need - held)
        if free < more:
            lines.append(
                f"address pool {name}: {free} free of {counts.get('total', '?')}, but this input can claim {more} "
                f"more at once ({need} machines with surge, {held} hold one now): CAIP leaves the rest pending "
                "and their Machines wait with no error; add addresses or free leaked IPAddresses"
            )
    return lines
