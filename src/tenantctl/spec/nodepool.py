"""`NodePool`: a group of workers of one cluster; it follows its cluster's substrate."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.spec.base import SpecModel
from tenantctl.spec.tenant import ObjectMeta

__all__ = [
    "DEFAULT_REPLICAS",
    "GpuSpec",
    "HealthCheckSpec",
    "KubevirtPoolSpec",
    "NodePool",
    "NodePoolSpec",
    "ProxmoxNetworkSpec",
    "ProxmoxPoolSpec",
    "ResourcesSpec",
    "RollingUpdateSpec",
    "TaintSpec",
]

Quantity = str | int | float
# Replicas of a pool that names neither `replicas` nor `minReplicas`/`maxReplicas`.
DEFAULT_REPLICAS = 2


class ResourcesSpec(SpecModel):
    cpu: Quantity | None = Field(default=None, description="vCPUs (rounded up to whole cores on proxmox).")
    memory: Quantity | None = Field(default=None, description="Memory (rounded up to MiB on proxmox).")


class GpuSpec(SpecModel):
    name: str = Field(description="Device name inside the VM (a DNS label, unique in the pool).")
    device_name: str = Field(description="KubeVirt permitted host device resource, e.g. nvidia.com/GA102GL_A10.")


class KubevirtPoolSpec(SpecModel):
    instance_type: str = Field(default="u1.medium", description="Used unless both cpu and memory are given.")
    disk_size: str = Field(default="20Gi", description="System disk size.")
    storage_class: str = Field(default="replicated", description="StorageClass of the system disk.")
    gpus: list[GpuSpec] = Field(default_factory=list, description="GPUs passed through to every worker VM.")


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
    template_id: int | None = Field(default=None, alias="templateID", ge=100, description="VMID of the template.")
    full: bool = Field(default=False, description="Full clone; linked clones (default) share the template's disk.")
    storage: str | None = Field(default=None, description="Full clones only: target storage.")
    format: Literal["raw", "qcow2", "vmdk"] | None = Field(default=None, description="Full clones only.")
    pool: str | None = Field(default=None, description="Proxmox resource pool: one ACL follows every VM.")
    disk_size_gb: int = Field(default=20, alias="diskSizeGB", ge=5, description="Boot disk size in GB.")
    network: ProxmoxNetworkSpec = Field(default_factory=ProxmoxNetworkSpec)


class RollingUpdateSpec(SpecModel):
    max_surge: int = Field(default=1, ge=0)
    max_unavailable: int = Field(default=0, ge=0)


class HealthCheckSpec(SpecModel):
    max_unhealthy: str | int = Field(default="50%", description="Count or percentage (`50%`) of the pool.")
    node_startup_timeout: str = Field(default="20m", description="Go duration (`20m`, `1h30m`, `1.5h`); at least 30s.")
    ready_unknown_timeout: str = Field(default="5m", description="Go duration; zero and negative refused.")
    ready_false_timeout: str = Field(default="10m", description="Go duration; zero and negative refused.")


class TaintSpec(SpecModel):
    key: str = Field(description="Qualified name; reserved domains refused as for labels.")
    value: str = Field(default="", description="Label-value syntax; may be empty.")
    effect: str = Field(description="NoSchedule, PreferNoSchedule or NoExecute.")


class NodePoolSpec(SpecModel):
    cluster: str = Field(description="Name of the TenantCluster in the same namespace.")
    replicas: int | None = Field(default=None, ge=0, description="Fixed size (default 2).")
    min_replicas: int | None = Field(default=None, ge=0, description="Autoscaled: lower bound (with maxReplicas).")
    max_replicas: int | None = Field(default=None, ge=0, description="Autoscaled: upper bound (with minReplicas).")
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    kubevirt: KubevirtPoolSpec = Field(default_factory=KubevirtPoolSpec)
    proxmox: ProxmoxPoolSpec | None = None
    rolling_update: RollingUpdateSpec = Field(default_factory=RollingUpdateSpec)
    health_check: HealthCheckSpec = Field(default_factory=HealthCheckSpec)
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Labels of the pool's Nodes; `kubernetes.io`, `k8s.io`, `tenantctl.io` refused except "
        "`node-role.kubernetes.io/*` and `node-restriction.kubernetes.io/*`.",
    )
    taints: list[TaintSpec] = Field(
        default_factory=list, description="Taints the pool's Nodes register with (`key`, `value`, `effect`)."
    )

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
