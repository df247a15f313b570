"""What each shard's watch cache holds: its own tenants in full, shared objects, and the few
objects of other controllers every pass reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.cache import ByName, Extra, InFull
from tenantctl.operator.runtime.claims import cluster_of_cluster, cluster_of_pool
from tenantctl.operator.runtime.kinds import GROUP, NODE_POOLS, TENANT_CLUSTERS, VERSION
from tenantctl.render.meta import (
    CLUSTER_LABEL,
    KAMAJI_CONTROL_PLANE_LABEL,
    MANAGED_BY,
    NAMESPACE_LABEL,
    TALOS_CA_SUFFIX,
    kamaji_admin_kubeconfig,
    kamaji_ca,
)
from tenantctl.render.talos_api import TENANT_CONTROL_PLANE_API


def inventory_of(shard: Shard) -> Callable[[str | None, Mapping[str, str]], bool] | None:
    """Which labelled objects a shard's cache holds: those of its own tenants, and shared ones (no
    tenant label: the chart sources). A namespaced object's tenant is its namespace and cluster label;
    a cluster-scoped one names its namespace in a label. None (hold all) for the single shard."""
    if shard.count == 1:
        return None

    def held(namespace: str | None, labels: Mapping[str, str]) -> bool:
        cluster = labels.get(CLUSTER_LABEL)
        tenant_namespace = namespace if namespace is not None else labels.get(NAMESPACE_LABEL)
        return cluster is None or tenant_namespace is None or shard.owns(tenant_namespace, cluster)

    return held


def read_secrets_of(shard: Shard) -> Extra:
    """Which Secrets of other controllers a shard's cache holds: those every pass of its tenants reads,
    so even a tenant's first read is answered from memory. Kamaji's CA and admin kubeconfig (labelled
    with their TenantControlPlane, named as the TenantCluster; Kamaji's other eight per tenant are never
    read, not held) and the Talos CA cert-manager issues, known by the name our Certificate gives it."""

    def held(key: tuple[str | None, str], labels: Mapping[str, str]) -> bool:
        (namespace, name), control_plane = key, labels.get(KAMAJI_CONTROL_PLANE_LABEL)
        if namespace is None:
            return False
        if control_plane is not None and name in (kamaji_ca(control_plane), kamaji_admin_kubeconfig(control_plane)):
            return shard.owns(namespace, control_plane)
        cluster = name.removesuffix(TALOS_CA_SUFFIX)
        return cluster != name and shard.owns(namespace, cluster)

    return held


def named_as_tenants_of(shard: Shard) -> Extra:
    """Objects of other controllers named as the TenantCluster they serve, held for the shard's own
    tenants: Kamaji's apiserver Service and TenantControlPlane, which every pass reads by that name.
    Held whole, every shard kept all of them (20,000 objects at 10,000 tenants over any shard count).
    Held by name alone, so a new tenant's first read of them, before Kamaji made them, asks no server."""

    def held(key: tuple[str | None, str]) -> bool:
        namespace, name = key
        return namespace is not None and shard.owns(namespace, name)

    return ByName(held)


def other_controllers_objects_of(shard: Shard) -> dict[tuple[str, str], Extra]:
    """Per (apiVersion, plural), which objects of other controllers the shard's cache holds."""
    named = named_as_tenants_of(shard)
    return {("v1", "secrets"): read_secrets_of(shard), ("v1", "services"): named,
            (TENANT_CONTROL_PLANE_API, "tenantcontrolplanes"): named}


LIST_PAGE_SIZE = 500
"""Objects per page of every list, kopf's and the cache's: all TenantClusters in one answer were one
allocation of every shard's, tens of MiB at ten thousand tenants."""
OWNED = {"app.kubernetes.io/managed-by": MANAGED_BY}
"""The label of every object the operator renders: the watch cache holds these, and what a pass names."""
HELD_WHOLE = frozenset({(f"{GROUP}/{VERSION}", "tenantclusters"), (f"{GROUP}/{VERSION}", "nodepools")})
"""Held whole by the watch cache: any replica may serve the admission webhook, which judges a change
against the tenant's cluster and pools whichever shard owns them; the pass lists a namespace's pools.
Of other shards' tenants a shard holds outlines (`tenants_in_full_of`). Secrets, Services and
TenantControlPlanes are held for the shard's own tenants only (`other_controllers_objects_of`)."""


def tenants_in_full_of(shard: Shard) -> dict[tuple[str, str], InFull]:
    """Which TenantClusters and NodePools a shard's cache holds in full: its own tenants' (a pool goes
    with its cluster). Every other shard's are outlines, their spec and identity, which is all the
    webhook reads of them. The single shard holds all in full."""
    if shard.count == 1:
        return {}

    def ours(cluster_of: Callable[[Mapping[str, Any]], str]) -> InFull:
        return lambda obj: shard.owns(str((obj.get("metadata") or {}).get("namespace") or ""), cluster_of(obj))

    return {(TENANT_CLUSTERS.api_version, TENANT_CLUSTERS.plural): ours(cluster_of_cluster),
            (NODE_POOLS.api_version, NODE_POOLS.plural): ours(cluster_of_pool)}

