"""What a user asks for: `TenantCluster` and `NodePool` models, parsed and checked in one pass.

The bottom room: imports only `problems`, never render, an API client or the CLI.
"""

from tenantctl.spec.addons import ADDON_NAMES, AddonSpec, AddonsSpec
from tenantctl.spec.autoscaling import AutoscalingSpec
from tenantctl.spec.exposure import ExposeSpec
from tenantctl.spec.loader import API_VERSION, TenantInput, parse_observed, parse_tenant_documents
from tenantctl.spec.nodepool import (
    DEFAULT_REPLICAS,
    GpuSpec,
    HealthCheckSpec,
    KubevirtPoolSpec,
    NodePool,
    NodePoolSpec,
    ProxmoxNetworkSpec,
    ProxmoxPoolSpec,
    ResourcesSpec,
    RollingUpdateSpec,
)
from tenantctl.spec.observed import ObservedState, TalosSecrets
from tenantctl.spec.tenant import (
    CCMSpec,
    ControlPlaneSpec,
    CSISpec,
    IPv4ConfigSpec,
    IPv6ConfigSpec,
    KubevirtClusterSpec,
    KubevirtStorageClassSpec,
    NetworkSpec,
    ObjectMeta,
    ProxmoxClusterSpec,
    SchedulerHintsSpec,
    StorageClassSpec,
    TalosSpec,
    TenantCluster,
    TenantClusterSpec,
)

__all__ = [
    "ADDON_NAMES",
    "API_VERSION",
    "DEFAULT_REPLICAS",
    "AddonSpec",
    "AddonsSpec",
    "AutoscalingSpec",
    "CCMSpec",
    "CSISpec",
    "ControlPlaneSpec",
    "ExposeSpec",
    "GpuSpec",
    "HealthCheckSpec",
    "IPv4ConfigSpec",
    "IPv6ConfigSpec",
    "KubevirtClusterSpec",
    "KubevirtPoolSpec",
    "KubevirtStorageClassSpec",
    "NetworkSpec",
    "NodePool",
    "NodePoolSpec",
    "ObjectMeta",
    "ObservedState",
    "ProxmoxClusterSpec",
    "ProxmoxNetworkSpec",
    "ProxmoxPoolSpec",
    "ResourcesSpec",
    "RollingUpdateSpec",
    "SchedulerHintsSpec",
    "StorageClassSpec",
    "TalosSecrets",
    "TalosSpec",
    "TenantCluster",
    "TenantClusterSpec",
    "TenantInput",
    "parse_observed",
    "parse_tenant_documents",
]
