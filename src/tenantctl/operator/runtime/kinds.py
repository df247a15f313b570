"""The operator's own kinds and their group: what every runtime module names."""

from __future__ import annotations

from tenantctl.operator.kube.client import Resource

GROUP, VERSION = "tenantctl.io", "v1alpha1"
KOPF_OBJECT_LOGGER = "kopf.objects"
WATCH_EVENT_HANDLERS = ("platform_changed", "cluster_changed", "pool_changed", "cluster_misplaced", "pool_misplaced")
"""The ids of the handlers every watch event runs: their successes are DEBUG lines (`RoutineAtDebug`)."""
TENANT_CLUSTERS = Resource(f"{GROUP}/{VERSION}", "TenantCluster", "tenantclusters", True)
NODE_POOLS = Resource(f"{GROUP}/{VERSION}", "NodePool", "nodepools", True)

Key = tuple[str, str]

