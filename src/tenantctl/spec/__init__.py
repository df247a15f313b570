"""What a user asks for: `TenantCluster` and `NodePool` models, parsed and checked in one pass."""

from tenantctl.spec.autoscaling import AutoscalingSpec
from tenantctl.spec.exposure import ExposeSpec
from tenantctl.spec.loader import API_VERSION, TenantInput, parse_observed, parse_tenant_documents
from tenantctl.spec.nodepool import (
    DEFAULT_REPLICAS,
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
    "API_VERSION",
    "DEFAULT_REPLICAS",
    "AutoscalingSpec",
    "CCMSpec",
    "CSISpec",
    "ControlPlaneSpec",
    "ExposeSpec",
    "HealthCheckSpec",
    "IPv4ConfigSpec",
    "KubevirtPoolSpec",
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
