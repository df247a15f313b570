"""Refusals of a Proxmox pool's placement, VMIDs, tags and NICs, before capmox or Proxmox refuses them late.

capmox accepts a node it cannot clone to, a VMID range too small for the pool (the machine fails with
"No free vmid found in vmIDRange"), a tag Proxmox later refuses, and a NIC without an address pool
(its CRD says so only at apply time); each is named here with the field and the value.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from tenantctl.problems import Problems
from tenantctl.spec import syntax
from tenantctl.spec.address_pools import check_address_pool
from tenantctl.spec.names import LABEL_MAX, machine_name_length
from tenantctl.spec.nodepool import NodePool, ProxmoxNetworkSpec
from tenantctl.spec.placement import at_once_text, group_key, machines_at_once, node_groups, pool_nodes
from tenantctl.spec.tenant import TenantCluster

__all__ = ["MTU_RULE", "check_node_list", "check_pool_placement", "check_vmid_overlaps"]

_NODE = re.compile(syntax.PVE_NODE)
_TAG = re.compile(syntax.PVE_TAG)
_NIC = re.compile(syntax.PVE_EXTRA_NIC)
MTU_RULE = (
    "1 (virtio: inherit the bridge's MTU) or 1280–65520: capmox v0.7.7's ProxmoxMachine webhook refuses "
    "less (IPv6 needs 1280), and its CRD more"
)


def check_node_list(path: str, nodes: Sequence[str], problems: Problems) -> None:
    """A list of Proxmox nodes: the CRD declares it a set (the API server refuses repeats), and node
    names are host name labels, which capmox compares as written."""
    for i, node in enumerate(nodes):
        if node in nodes[:i]:
            problems.error(f"{path}[{i}]", f"duplicate entry {node!r} (already at index {nodes.index(node)})")
    for i, node in enumerate(nodes):
        if not _NODE.fullmatch(node):
            problems.error(
                f"{path}[{i}]",
                f"{node!r} is not a Proxmox node name (letters, digits and '-', at most 63, no '-' at either end)",
            )


def check_pool_placement(at: str, pool: NodePool, cluster: TenantCluster, problems: Problems) -> None:
    """Everything under `spec.proxmox` that decides where the VMs go and what they carry."""
    px = pool.spec.proxmox
    if px is None:
        return
    base = f"{at}.spec.proxmox"
    cluster_nodes = list(cluster.spec.proxmox.allowed_nodes) if cluster.spec.proxmox else []
    if px.allowed_nodes is not None:
        _check_subset(f"{base}.allowedNodes", px.allowed_nodes, cluster_nodes, cluster.metadata.name, problems)
    if px.placement == "spread":
        _check_spread(at, pool, cluster, problems)
    elif px.per_node_templates:
        problems.error(
            f"{base}.perNodeTemplates",
            "applies to placement: spread only (each node group clones its own node's template); set "
            "placement: spread or drop perNodeTemplates",
        )
    _check_vmid_range(at, pool, cluster, problems)
    _check_tags(f"{base}.tags", px.tags, problems)
    _check_network(f"{base}.network", px.network, problems)


def _check_subset(
    path: str, nodes: Sequence[str], cluster_nodes: Sequence[str], cluster: str, problems: Problems
) -> None:
    if not nodes:
        problems.error(path, "must name at least one node (leave it out to use the cluster's allowedNodes)")
    check_node_list(path, nodes, problems)
    outside = [n for n in dict.fromkeys(nodes) if n not in cluster_nodes]
    if outside:
        problems.error(
            path,
            f"{', '.join(map(repr, outside))} not in TenantCluster {cluster!r} spec.proxmox.allowedNodes "
            f"{list(cluster_nodes)}: a pool may only narrow the cluster's nodes (capmox takes a template's own "
            "list instead of the cluster's, so a node outside it would be used unchecked)",
        )


def _check_spread(at: str, pool: NodePool, cluster: TenantCluster, problems: Problems) -> None:
    px = pool.spec.proxmox
    assert px is not None
    base = f"{at}.spec.proxmox"
    nodes = list(dict.fromkeys(pool_nodes(pool, cluster)))
    keys: dict[str, str] = {}
    for node in nodes:
        key = group_key(node)
        if key in keys:
            problems.error(
                f"{base}.placement",
                f"nodes {keys[key]!r} and {node!r} differ only in case: their node groups would share the names "
                f"{cluster.metadata.name}-{pool.metadata.name}-{key}",
            )
        keys[key] = node
    longest = max(keys, key=len, default="")
    length = machine_name_length(cluster.metadata.name, f"{pool.metadata.name}-{longest}")
    if longest and length > LABEL_MAX:
        problems.error(
            f"{at}.metadata.name",
            f"spread over node {keys[longest]!r} gives Machine names of {length} characters "
            f"(<cluster>-<pool>-<node>-xxxxx-xxxxx), over the {LABEL_MAX}-character label limit; shorten the "
            "pool's name",
        )
    spec = pool.spec
    if spec.autoscaled and spec.max_replicas is not None and nodes and spec.max_replicas < len(nodes):
        problems.error(
            f"{at}.spec.maxReplicas",
            f"{spec.max_replicas} is fewer than the {len(nodes)} nodes the pool spreads over ({', '.join(nodes)}): "
            "a node group with a maximum of 0 never gets a worker; raise maxReplicas or narrow allowedNodes",
        )
    _check_group_health(at, pool, cluster, problems)
    if px.per_node_templates and px.template_tags is None:
        problems.error(
            f"{base}.perNodeTemplates",
            "needs templateTags: each node's template is found by the pool's tags plus node-<node>; one "
            "templateID names one template on one node",
        )


def _check_group_health(at: str, pool: NodePool, cluster: TenantCluster, problems: Problems) -> None:
    """Each node group has its own MachineHealthCheck; CAPI scales a percentage down (`50%` of 1 is 0) and
    stops remediating once more machines are unhealthy than that, so a small group would never heal."""
    value = pool.spec.health_check.max_unhealthy
    if not isinstance(value, str) or not value.endswith("%") or not value[:-1].isdigit():
        return
    percent = int(value[:-1])
    stuck = sorted({g.ceiling for g in node_groups(pool, cluster) if g.ceiling and g.ceiling * percent // 100 == 0})
    if stuck:
        problems.warn(
            f"{at}.spec.healthCheck.maxUnhealthy",
            f"{value} of a node group of {', '.join(map(str, stuck))} machine(s) is 0: its MachineHealthCheck "
            "never replaces an unhealthy worker; set maxUnhealthy to a count (e.g. 1) or 100% for a spread pool",
        )


def _check_vmid_range(at: str, pool: NodePool, cluster: TenantCluster, problems: Problems) -> None:
    px = pool.spec.proxmox
    assert px is not None
    rng = px.vm_id_range
    if rng is None:
        return
    path = f"{at}.spec.proxmox.vmIDRange"
    if rng.end < rng.start:
        problems.error(path, f"end {rng.end} is before start {rng.start}")
        return
    need = machines_at_once(pool, cluster)
    if len(rng) < need:
        problems.error(
            path,
            f"{rng.start}–{rng.end} holds {len(rng)} VMIDs, but the pool can have {need} VMs at once "
            f"({at_once_text(pool, cluster)}): capmox fails the next machine with \"No free vmid found in vmIDRange\"",
        )


def _check_tags(path: str, tags: Sequence[str], problems: Problems) -> None:
    first: dict[str, int] = {}
    for i, tag in enumerate(tags):
        if not _TAG.fullmatch(tag):
            problems.error(
                f"{path}[{i}]",
                f"{tag!r} is not a Proxmox tag: lower-case letters, digits and _ first, then also - + . "
                "(Proxmox refuses it; capmox would retry the VM config forever)",
            )
        elif tag in first:
            problems.error(f"{path}[{i}]", f"duplicate tag {tag!r} (already at index {first[tag]})")
        first.setdefault(tag, i)


def _check_mtu(path: str, mtu: int | None, problems: Problems) -> None:
    if mtu is not None and not (mtu == 1 or 1280 <= mtu <= 65520):
        problems.error(path, f"{mtu} is not an MTU capmox accepts: {MTU_RULE}")


def _check_network(base: str, net: ProxmoxNetworkSpec, problems: Problems) -> None:
    _check_mtu(f"{base}.mtu", net.mtu, problems)
    seen: dict[str, int] = {}
    for i, dev in enumerate(net.additional_devices):
        at = f"{base}.additionalDevices[{i}]"
        if not _NIC.fullmatch(dev.name):
            problems.error(
                f"{at}.name", f"{dev.name!r} is not a further NIC of a VM: net1 … net31 (net0 is the default device)"
            )
        elif dev.name in seen:
            problems.error(f"{at}.name", f"duplicate device {dev.name!r} (already at index {seen[dev.name]})")
        seen.setdefault(dev.name, i)
        if not dev.bridge.strip():
            problems.error(f"{at}.bridge", "must not be empty")
        _check_mtu(f"{at}.mtu", dev.mtu, problems)
        if not dev.address_pools:
            problems.error(
                at,
                "needs ipv4 and/or ipv6 addresses: capmox v0.7.7 gives a further NIC its address only from a pool "
                "(there is no DHCP mode), and its CRD refuses a device without one",
            )
        for version, dpool in dev.address_pools:
            check_address_pool(f"{at}.ipv{version}", dpool.addresses, dpool.prefix, dpool.gateway, version, problems)


def check_vmid_overlaps(pools: Sequence[NodePool], problems: Problems) -> None:
    """Two pools drawing VMIDs from one range race for them: capmox checks only its own cluster's machines
    before taking an id, so a range shared with another pool or tenant fails clones at random."""
    ranged = sorted(
        ((p.spec.proxmox.vm_id_range.start, p.spec.proxmox.vm_id_range.end, p) for p in pools
         if p.spec.proxmox is not None and p.spec.proxmox.vm_id_range is not None
         and p.spec.proxmox.vm_id_range.end >= p.spec.proxmox.vm_id_range.start),
        key=lambda r: (r[0], r[1]),
    )
    furthest: tuple[int, NodePool] | None = None
    for start, end, pool in ranged:
        if furthest is not None and furthest[0] >= start:
            other = furthest[1]
            problems.error(
                f"NodePool/{pool.metadata.namespace}/{pool.metadata.name}.spec.proxmox.vmIDRange",
                f"{start}–{end} overlaps NodePool {other.metadata.namespace}/{other.metadata.name}'s vmIDRange "
                f"(up to {furthest[0]}): give each pool its own VMIDs",
            )
        if furthest is None or end > furthest[0]:
            furthest = (end, pool)
