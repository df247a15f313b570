"""Proxmox substrate: workers are VMs cloned by capmox from a Talos template."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tenantctl.render.meta import Names, node_group_labels, object_meta
from tenantctl.render.sizing import capmox_memory_mib, num_cores
from tenantctl.spec import NodePool, ProxmoxClusterSpec, TenantCluster
from tenantctl.spec.deprecations import version_tag
from tenantctl.spec.nodepool import AdditionalDeviceSpec, DeviceAddressPoolSpec, ProxmoxNetworkSpec
from tenantctl.spec.placement import NodeGroup

__all__ = [
    "CAIP_API",
    "CAPMOX_API",
    "NODE_TEMPLATE_TAG_PREFIX",
    "TALOS_TAG_PREFIX",
    "owner_tags",
    "render_address_pools",
    "render_proxmox_cluster",
    "render_proxmox_machine_template",
    "template_match_tags",
    "tenant_tag",
]

CAPMOX_API = "infrastructure.cluster.x-k8s.io/v1alpha1"
CAIP_API = "ipam.cluster.x-k8s.io/v1alpha2"
# capmox allocates worker addresses from the InClusterIPPool it creates from ipv4Config (and ipv6Config).
_DEFAULT_ROUTE_METRIC = 100
TALOS_TAG_PREFIX = "talos-"
"""A Proxmox template carries `talos-<version>` among its tags: the Talos its disk holds."""
NODE_TEMPLATE_TAG_PREFIX = "node-"
"""With perNodeTemplates, each node's copy of the template also carries `node-<node>` (lower case)."""


def template_match_tags(tags: Sequence[str], talos_version: str, node: str | None = None) -> list[str]:
    """The tags capmox selects a pool's template by: the pool's, plus the Talos version the pool runs
    (and, for a node group cloning its own node's copy, `node-<node>`).

    Talos lives on the template's disk, so a `talos.version` change must select another template, or
    the spec and the nodes drift apart. capmox matches the exact set (sorted equality, lower case):
    hand it a canonical one. A template on node-local storage can only be cloned on its own node, and
    one selector must match exactly one template cluster-wide, so per-node copies differ by a tag.
    """
    extra = {f"{NODE_TEMPLATE_TAG_PREFIX}{node.lower()}"} if node is not None else set()
    if any(version_tag(tag) is not None for tag in tags):
        # Tags that name the version themselves select as they did before `talos-<version>` (deprecated,
        # spec.deprecations): adding it would rename the template and roll a pool nobody changed.
        return sorted(set(tags) | extra)
    return sorted(set(tags) | {f"{TALOS_TAG_PREFIX}{talos_version}"} | extra)


def tenant_tag(cluster: TenantCluster) -> str:
    """`tenant.<namespace>.<cluster>`: the tag that tells a tenant's VMs apart (the doctor reads it)."""
    return f"tenant.{cluster.metadata.namespace}.{cluster.metadata.name}"


def owner_tags(cluster: TenantCluster, pool: NodePool) -> list[str]:
    """What the Proxmox UI shows of whose VM it is: `tenantctl`, `tenant.<namespace>.<cluster>`,
    `nodepool.<pool>` (names are DNS labels, so each is a Proxmox tag as is)."""
    return ["tenantctl", tenant_tag(cluster), f"nodepool.{pool.metadata.name}"]


def _proxmox(cluster: TenantCluster) -> ProxmoxClusterSpec:
    assert cluster.spec.proxmox is not None, "checked by the spec: proxmox clusters have a proxmox block"
    return cluster.spec.proxmox


def render_proxmox_cluster(cluster: TenantCluster) -> dict[str, Any]:
    """externalManagedControlPlane (Kamaji owns the endpoint) and no managed-by annotation: with it CAPI
    never sets the ownerRef and capmox waits forever."""
    names = Names(cluster)
    px = _proxmox(cluster)
    assert px.ipv4_config is not None and px.credentials_secret_name is not None
    spec: dict[str, Any] = {
        "externalManagedControlPlane": True,
        "allowedNodes": list(px.allowed_nodes),
        "dnsServers": list(px.dns_servers),
    }
    for version, config in px.address_configs:
        spec[f"ipv{version}Config"] = {
            "addresses": list(config.addresses),
            "prefix": config.prefix,
            "gateway": config.gateway,
            "metric": _DEFAULT_ROUTE_METRIC,
        }
    spec["credentialsRef"] = {"name": px.credentials_secret_name, "namespace": names.namespace}
    if px.scheduler_hints is not None and px.scheduler_hints.memory_adjustment is not None:
        spec["schedulerHints"] = {"memoryAdjustment": px.scheduler_hints.memory_adjustment}
    return {
        "apiVersion": CAPMOX_API,
        "kind": "ProxmoxCluster",
        "metadata": object_meta(names.cluster, names.namespace, names.cluster),
        "spec": spec,
    }


def _device(net: ProxmoxNetworkSpec) -> dict[str, Any]:
    device: dict[str, Any] = {"bridge": net.bridge, "model": net.model}
    if net.vlan is not None:
        device["vlan"] = net.vlan
    if net.mtu is not None:
        device["mtu"] = net.mtu
    return device


def _pool_ref(name: str) -> dict[str, str]:
    return {"apiGroup": CAIP_API.partition("/")[0], "kind": "InClusterIPPool", "name": name}


def _additional_device(names: Names, pool: NodePool, dev: AdditionalDeviceSpec) -> dict[str, Any]:
    device: dict[str, Any] = {"name": dev.name, "bridge": dev.bridge, "model": dev.model}
    if dev.vlan is not None:
        device["vlan"] = dev.vlan
    if dev.mtu is not None:
        device["mtu"] = dev.mtu
    for version, _ in dev.address_pools:
        device[f"ipv{version}PoolRef"] = _pool_ref(names.address_pool(pool, dev.name, version))
    return device


def _machine_spec(
    names: Names, pool: NodePool, group: NodeGroup, talos_version: str, tags: list[str]
) -> dict[str, Any]:
    px = pool.spec.proxmox
    assert px is not None, "checked by the spec: proxmox pools have a proxmox block"
    spec: dict[str, Any] = {}
    if px.template_tags is not None:
        # The selector alone: capmox v0.7.7's ProxmoxMachine CRD refuses sourceNode beside it
        # (`[has(self.sourceNode), has(self.templateSelector)].exists_one(c, c)`), a rule its template CRD
        # lacks, so only the ProxmoxMachine Cluster API clones would be refused. capmox clones from the
        # selected template's own node; sourceNode stays in the spec as where `doctor` expects it.
        node = group.node if px.per_node_templates else None
        spec["templateSelector"] = {"matchTags": template_match_tags(px.template_tags, talos_version, node)}
    else:
        spec["sourceNode"] = px.source_node
        spec["templateID"] = px.template_id
    # Always explicit: capmox's CRD defaults `full` to true, which would silently copy whole disks.
    spec["full"] = px.full
    if px.full:
        if px.storage is not None:
            spec["storage"] = px.storage
        if px.format is not None:
            spec["format"] = px.format
    if px.pool is not None:
        spec["pool"] = px.pool
    if group.allowed_nodes:
        # capmox takes a machine's own list instead of the cluster's; one node pins a spread group.
        spec["allowedNodes"] = list(group.allowed_nodes)
    if tags:
        spec["tags"] = tags
    if px.vm_id_range is not None:
        spec["vmIDRange"] = {"start": px.vm_id_range.start, "end": px.vm_id_range.end}
    res = pool.spec.resources
    if res.cpu is not None:
        spec["numSockets"] = 1
        spec["numCores"] = num_cores(res.cpu)
    if res.memory is not None:
        spec["memoryMiB"] = capmox_memory_mib(res.memory)
    spec["disks"] = {"bootVolume": {"disk": "scsi0", "sizeGb": px.disk_size_gb}}
    network: dict[str, Any] = {"default": _device(px.network)}
    if px.network.additional_devices:
        network["additionalDevices"] = [_additional_device(names, pool, d) for d in px.network.additional_devices]
    spec["network"] = network
    # Talos ships no qemu-guest-agent and no cloud-init: without these capmox waits forever.
    spec["checks"] = {"skipQemuGuestAgent": True, "skipCloudInitStatus": True}
    return spec


def render_proxmox_machine_template(cluster: TenantCluster, pool: NodePool, group: NodeGroup) -> dict[str, Any]:
    names = Names(cluster)
    px = pool.spec.proxmox
    assert px is not None, "checked by the spec: proxmox pools have a proxmox block"
    tags = sorted({*(owner_tags(cluster, pool) if px.owner_tags else ()), *px.tags})
    spec = {"template": {"spec": _machine_spec(names, pool, group, cluster.spec.talos.version, tags)}}
    name = names.machine_template(pool, spec, group.key)
    return {
        "apiVersion": CAPMOX_API,
        "kind": "ProxmoxMachineTemplate",
        "metadata": object_meta(
            name, names.namespace, names.cluster, pool=pool.metadata.name, labels=node_group_labels(group.key)
        ),
        "spec": spec,
    }


def _address_pool(names: Names, pool: NodePool, dev: AdditionalDeviceSpec, version: int,
                  family: DeviceAddressPoolSpec) -> dict[str, Any]:
    spec: dict[str, Any] = {"addresses": list(family.addresses), "prefix": family.prefix}
    if family.gateway is not None:
        spec["gateway"] = family.gateway
    return {
        "apiVersion": CAIP_API,
        "kind": "InClusterIPPool",
        "metadata": object_meta(
            names.address_pool(pool, dev.name, version), names.namespace, names.cluster, pool=pool.metadata.name
        ),
        "spec": spec,
    }


def render_address_pools(cluster: TenantCluster, pool: NodePool) -> list[dict[str, Any]]:
    """One InClusterIPPool per family of each further NIC; capmox claims each machine's address from it
    (the default NIC's pool capmox makes itself, from the ProxmoxCluster's ipv4Config/ipv6Config)."""
    px = pool.spec.proxmox
    if px is None:
        return []
    names = Names(cluster)
    return [
        _address_pool(names, pool, dev, version, family)
        for dev in px.network.additional_devices
        for version, family in dev.address_pools
    ]
