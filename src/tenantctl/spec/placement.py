"""Where a pool's workers may run, and how a spread pool divides into one node group per Proxmox node.

capmox v0.7.7 has no failure domains for workers: each clone goes to one of the allowed nodes, round
robin by the cluster's VM count while memory allows (`internal/service/scheduler/vmscheduler.go`), so
nothing holds a pool apart after a remediation or a full node. A spread pool is therefore several
MachineDeployments, each pinned to one node (`allowedNodes: [node]`): losing a host then costs at most
⌈replicas / nodes⌉ workers. The split is computed here, once, so the renderer, the checks, the IP
capacity arithmetic and the doctor all count the same machines.
"""

from __future__ import annotations

from dataclasses import dataclass

from tenantctl.spec.nodepool import DEFAULT_REPLICAS, NodePool
from tenantctl.spec.tenant import TenantCluster

__all__ = ["NodeGroup", "at_once_text", "group_key", "machines_at_once", "node_groups", "pool_nodes", "split_evenly"]


@dataclass(frozen=True)
class NodeGroup:
    """One MachineDeployment's share of a pool. `key` is None for an unsplit pool (one MachineDeployment
    named after the pool), else the node's name in lower case: the suffix of the group's object names."""

    key: str | None
    node: str | None
    allowed_nodes: tuple[str, ...]
    replicas: int | None
    min_replicas: int | None
    max_replicas: int | None

    @property
    def ceiling(self) -> int:
        """The most machines this group asks for at once, before rolling-update surge."""
        if self.replicas is not None:
            return self.replicas
        return max(self.max_replicas or 0, self.min_replicas or 0)

    def surge(self, max_surge: int) -> int:
        """Extra machines a rollout adds: none for a group of 0 (CAPI scales a new MachineSet to its
        desired count, which is 0), `maxSurge` otherwise; each group surges on its own."""
        return max_surge if self.ceiling else 0

    def at_once(self, max_surge: int) -> int:
        return self.ceiling + self.surge(max_surge)


def split_evenly(total: int, parts: int) -> list[int]:
    """`total` over `parts` shares that differ by at most one, the larger ones first: 5 over 3 is 2, 2, 1."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def group_key(node: str) -> str:
    """A node's part of object names: Proxmox node names may carry capitals, Kubernetes names may not."""
    return node.lower()


def pool_nodes(pool: NodePool, cluster: TenantCluster) -> list[str]:
    """The nodes this pool's workers may land on: its own subset, else the cluster's allowedNodes."""
    px = pool.spec.proxmox
    if px is not None and px.allowed_nodes is not None:
        return list(px.allowed_nodes)
    cpx = cluster.spec.proxmox
    return list(cpx.allowed_nodes) if cpx is not None else []


def node_groups(pool: NodePool, cluster: TenantCluster) -> list[NodeGroup]:
    """The pool's MachineDeployments: one, or for a spread Proxmox pool one per node in name order
    (sorted, so reordering the list moves nothing; the first nodes take the remainder)."""
    spec = pool.spec
    px = spec.proxmox
    fixed = None if spec.autoscaled else (spec.replicas if spec.replicas is not None else DEFAULT_REPLICAS)
    if cluster.spec.substrate != "proxmox" or px is None or px.placement != "spread":
        own = tuple(px.allowed_nodes) if cluster.spec.substrate == "proxmox" and px and px.allowed_nodes else ()
        return [NodeGroup(None, None, own, fixed, spec.min_replicas, spec.max_replicas)]
    nodes = sorted(dict.fromkeys(pool_nodes(pool, cluster)), key=lambda n: (group_key(n), n))
    if not nodes:
        return []
    count = len(nodes)
    replicas = split_evenly(fixed, count) if fixed is not None else [None] * count
    lows = split_evenly(spec.min_replicas, count) if spec.min_replicas is not None else [None] * count
    highs = split_evenly(spec.max_replicas, count) if spec.max_replicas is not None else [None] * count
    return [
        NodeGroup(group_key(node), node, (node,), r, lo, hi)
        for node, r, lo, hi in zip(nodes, replicas, lows, highs, strict=True)
    ]


def machines_at_once(pool: NodePool, cluster: TenantCluster) -> int:
    """Machines a pool can hold at once: each MachineDeployment's ceiling plus its own surge (a spread pool's
    node groups roll together, so each surges): what its addresses and VMIDs must cover."""
    surge = pool.spec.rolling_update.max_surge
    return sum(g.at_once(surge) for g in node_groups(pool, cluster))


def at_once_text(pool: NodePool, cluster: TenantCluster) -> str:
    """`51+1`, or `pve1 2+1, pve2 1+1`: what `machines_at_once` adds up, per MachineDeployment."""
    surge = pool.spec.rolling_update.max_surge
    groups = node_groups(pool, cluster)
    return ", ".join(f"{g.node + ' ' if g.node else ''}{g.ceiling}+{g.surge(surge)}" for g in groups)
