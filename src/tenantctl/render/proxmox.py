"""Proxmox substrate: workers are VMs cloned by capmox from a Talos template."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tenantctl.render.meta import Names, object_meta
from tenantctl.render.sizing import capmox_memory_mib, num_cores
from tenantctl.spec import NodePool, ProxmoxClusterSpec, TenantCluster

__all__ = ["CAPMOX_API", "TALOS_TAG_PREFIX", "render_proxmox_cluster", "render_proxmox_machine_template",
           "template_match_tags"]

CAPMOX_API = "infrastructure.cluster.x-k8s.io/v1alpha1"
# capmox allocates worker addresses from the InClusterIPPool it creates from ipv4Config.
_IPV4_METRIC = 100
TALOS_TAG_PREFIX = "talos-"
"""A Proxmox template carries `talos-<version>` among its tags: the Talos its disk holds."""


def template_match_tags(tags: Sequence[str], talos_version: str) -> list[str]:
    """The tags capmox selects a pool's template by: the pool's, plus the Talos version the pool runs.

    Talos lives on the template's disk, so a `talos.version` change must select another template, or
    the spec and the nodes drift apart. capmox matches the exact set (sorted equality): hand it a
    canonical one.
    """
    return sorted(set(tags) | {f"{TALOS_TAG_PREFIX}{talos_version}"})


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
        "ipv4Config": {
            "addresses": list(px.ipv4_config.addresses),
            "prefix": px.ipv4_config.prefix,
            "gateway": px.ipv4_config.gateway,
            "metric": _IPV4_METRIC,
        },
        "credentialsRef": {"name": px.credentials_secret_name, "namespace": names.namespace},
    }
    if px.scheduler_hints is not None and px.scheduler_hints.memory_adjustment is not None:
        spec["schedulerHints"] = {"memoryAdjustment": px.scheduler_hints.memory_adjustment}
    return {
        "apiVersion": CAPMOX_API,
        "kind": "ProxmoxCluster",
        "metadata": object_meta(names.cluster, names.namespace, names.cluster),
        "spec": spec,
    }


def _machine_spec(pool: NodePool, talos_version: str) -> dict[str, Any]:
    px = pool.spec.proxmox
    assert px is not None, "checked by the spec: proxmox pools have a proxmox block"
    spec: dict[str, Any] = {"sourceNode": px.source_node}
    if px.template_tags is not None:
        spec["templateSelector"] = {"matchTags": template_match_tags(px.template_tags, talos_version)}
    else:
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
    res = pool.spec.resources
    if res.cpu is not None:
        spec["numSockets"] = 1
        spec["numCores"] = num_cores(res.cpu)
    if res.memory is not None:
        spec["memoryMiB"] = capmox_memory_mib(res.memory)
    spec["disks"] = {"bootVolume": {"disk": "scsi0", "sizeGb": px.disk_size_gb}}
    network: dict[str, Any] = {"bridge": px.network.bridge, "model": px.network.model}
    if px.network.vlan is not None:
        network["vlan"] = px.network.vlan
    spec["network"] = {"default": network}
    # Talos ships no qemu-guest-agent and no cloud-init: without these capmox waits forever.
    spec["checks"] = {"skipQemuGuestAgent": True, "skipCloudInitStatus": True}
    return spec


def render_proxmox_machine_template(cluster: TenantCluster, pool: NodePool) -> dict[str, Any]:
    names = Names(cluster)
    spec = {"template": {"spec": _machine_spec(pool, cluster.spec.talos.version)}}
    name = names.machine_template(pool, spec)
    return {
        "apiVersion": CAPMOX_API,
        "kind": "ProxmoxMachineTemplate",
        "metadata": object_meta(name, names.namespace, names.cluster, pool=pool.metadata.name),
        "spec": spec,
    }
