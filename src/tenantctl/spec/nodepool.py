"""`NodePool`: a group of workers of one cluster; it follows its cluster's substrate."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.spec.base import SpecModel
from tenantctl.spec.patterns import INT32_MAX
from tenantctl.spec.tenant import ObjectMeta

__all__ = [
    "DEFAULT_REPLICAS",
    "HealthCheckSpec",
    "KubevirtPoolSpec",
    "NodePool",
    "NodePoolSpec",
    "ProxmoxNetworkSpec",
    "ProxmoxPoolSpec",
    "ResourcesSpec",
    "RollingUpdateSpec",
]

Quantity = str | int | float
# Replicas of a pool that names neither `replicas` nor `minReplicas`/`maxReplicas`.
DEFAULT_REPLICAS = 2


class ResourcesSpec(SpecModel):
    cpu: Quantity | None = Field(default=None, description="vCPUs (rounded up to whole cores on proxmox).")
    memory: Quantity | None = Field(default=None, description="Memory (rounded up to MiB on proxmox).")


class KubevirtPoolSpec(SpecModel):
    instance_type: str = Field(default="u1.medium", description="Used unless both cpu and memory are given.")
    disk_size: str = Field(default="20Gi", description="System disk size.")
    storage_class: str = Field(default="replicated", description="StorageClass of the system disk.")


class ProxmoxNetworkSpec(SpecModel):
    bridge: str = "vmbr0"
    vlan: int | None = Field(default=None, ge=1, le=4094)
    model: Literal["virtio", "e1000", "rtl8139", "vmxnet3"] = "virtio"


class ProxmoxPoolSpec(SpecModel):
    """How capmox clones a worker: from which node and template, linked or full, into which pool."""

    source_node: str = Field(description="Proxmox node holding the template.")
    template_tags: list[str] | None = Field(
        default=None, description="Exact tag set of the Talos template (or templateID)."
    )
    template_id: int | None = Field(
        default=None, alias="templateID", ge=100, le=INT32_MAX, description="VMID of the template."
    )
    full: bool = Field(default=False, description="Full clone; linked clones (default) share the template's disk.")
    storage: str | None = Field(default=None, description="Full clones only: target storage.")
    format: Literal["raw", "qcow2", "vmdk"] | None = Field(default=None, description="Full clones only.")
    pool: str | None = Field(default=None, description="Proxmox resource pool: one ACL follows every VM.")
    disk_size_gb: int = Field(
        default=20, alias="diskSizeGB", ge=5, le=INT32_MAX, description="Boot disk size in GB."
    )
    network: ProxmoxNetworkSpec = Field(default_factory=ProxmoxNetworkSpec)


class RollingUpdateSpec(SpecModel):
    max_surge: int = Field(default=1, ge=0, le=INT32_MAX)
    max_unavailable: int = Field(default=0, ge=0, le=INT32_MAX)


class HealthCheckSpec(SpecModel):
    max_unhealthy: str | int = "50%"
    node_startup_timeout: str = "20m"
    ready_unknown_timeout: str = "5m"
    ready_false_timeout: str = "10m"


class NodePoolSpec(SpecModel):
    cluster: str = Field(description="Name of the TenantCluster in the same namespace.")
    replicas: int | None = Field(default=None, ge=0, le=INT32_MAX, description="Fixed size (default 2).")
    min_replicas: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Autoscaled: lower bound (with maxReplicas)."
    )
    max_replicas: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Autoscaled: upper bound (with minReplicas)."
    )
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    kubevirt: KubevirtPoolSpec = Field(default_factory=KubevirtPoolSpec)
    proxmox: ProxmoxPoolSpec | None = None
    rolling_update: RollingUpdateSpec = Field(default_factory=RollingUpdateSpec)
    health_check: HealthCheckSpec = Field(default_factory=HealthCheckSpec)

    @property
    def autoscaled(self) -> bool:
        return self.min_replicas is not None or self.max_replicas is not None

    @property
    def ceiling(self) -> int:
        """The most machines this pool can ask for at once, before rolling-update surge."""
        if self.autoscaled:
            return max(self.max_replicas or 0, self.min_replicas or 0)
        return self.replicas if self.replicas is not None else DEFAULT_REPLICAS



class NodePool(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["NodePool"]
    metadata: ObjectMeta
    spec: NodePoolSpec
