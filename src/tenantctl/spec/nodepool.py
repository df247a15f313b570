"""`NodePool`: a group of workers of one cluster; it follows its cluster's substrate."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from tenantctl.spec import syntax
from tenantctl.spec.autoscaling import AutoscalingSpec
from tenantctl.spec.base import SpecModel
from tenantctl.spec.labels import TAINT_EFFECTS
from tenantctl.spec.patterns import INT32_MAX
from tenantctl.spec.tenant import ObjectMeta

__all__ = [
    "DEFAULT_REPLICAS",
    "VMID_MAX",
    "VMID_MIN",
    "AdditionalDeviceSpec",
    "DeviceAddressPoolSpec",
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
    "VmIdRangeSpec",
]

Quantity = str | int | float
_NAME = 253
# Replicas of a pool that names neither `replicas` nor `minReplicas`/`maxReplicas`.
DEFAULT_REPLICAS = 2


_QUANTITY_BOUND: dict[str, Any] = {"maxLength": 64}


class ResourcesSpec(SpecModel):
    cpu: Quantity | None = Field(
        default=None, description="vCPUs (rounded up to whole cores on proxmox).", json_schema_extra=_QUANTITY_BOUND
    )
    memory: Quantity | None = Field(
        default=None, description="Memory (rounded up to MiB on proxmox).", json_schema_extra=_QUANTITY_BOUND
    )


class GpuSpec(SpecModel):
    name: str = Field(max_length=63, description="Device name inside the VM (a DNS label, unique in the pool).")
    device_name: str = Field(
        max_length=_NAME, description="KubeVirt permitted host device resource, e.g. nvidia.com/GA102GL_A10."
    )


class KubevirtPoolSpec(SpecModel):
    instance_type: str = Field(
        default="u1.medium", max_length=_NAME, description="Used unless both cpu and memory are given."
    )
    disk_size: str = Field(default="20Gi", max_length=64, description="System disk size.")
    storage_class: str = Field(default="replicated", max_length=_NAME, description="StorageClass of the system disk.")
    gpus: list[GpuSpec] = Field(
        default_factory=list,
        max_length=16,
        description="GPUs passed through to every worker VM.",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    )


NicModel = Literal["virtio", "e1000", "rtl8139", "vmxnet3"]
_MTU_DOC = "1 (virtio: the bridge's MTU) or 1280–65520."
_MTU: dict[str, Any] = {"minimum": 1, "maximum": 65520}


class DeviceAddressPoolSpec(SpecModel):
    """One family's addresses of an additional device: rendered as its own InClusterIPPool."""

    addresses: list[Annotated[str, Field(max_length=2 * 45 + 3)]] = Field(
        max_length=64, description="IPs, CIDRs or `a-b` ranges.", json_schema_extra={"minItems": 1}
    )
    prefix: int = Field(ge=0, le=128, description="Prefix length of the device's subnet.")
    gateway: str | None = Field(
        default=None, max_length=45, description="Optional; a second default route is rarely wanted."
    )


class AdditionalDeviceSpec(SpecModel):
    """A further NIC of every worker (storage or tenant networks); capmox needs an address pool for it."""

    name: str = Field(
        max_length=5,
        description="Proxmox device key `net1`…`net31` (net0 is the default device).",
        json_schema_extra={"pattern": syntax.PVE_EXTRA_NIC},
    )
    bridge: str = Field(max_length=64, json_schema_extra={"minLength": 1})
    vlan: int | None = Field(default=None, ge=1, le=4094)
    model: NicModel = "virtio"
    mtu: int | None = Field(default=None, description=_MTU_DOC, json_schema_extra=_MTU)
    ipv4: DeviceAddressPoolSpec | None = Field(default=None, description="IPv4 pool of this device.")
    ipv6: DeviceAddressPoolSpec | None = Field(default=None, description="IPv6 pool of this device.")

    @property
    def address_pools(self) -> list[tuple[int, DeviceAddressPoolSpec]]:
        """(IP version, pool) of each family the NIC draws addresses from."""
        return [(version, pool) for version, pool in ((4, self.ipv4), (6, self.ipv6)) if pool is not None]


class ProxmoxNetworkSpec(SpecModel):
    bridge: str = Field(default="vmbr0", max_length=64)
    vlan: int | None = Field(default=None, ge=1, le=4094)
    model: NicModel = "virtio"
    mtu: int | None = Field(default=None, description=_MTU_DOC, json_schema_extra=_MTU)
    additional_devices: list[AdditionalDeviceSpec] = Field(
        default_factory=list,
        max_length=31,
        description="Further NICs, each with its own address pool(s).",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    )


_PveTag = Annotated[str, Field(max_length=_NAME, json_schema_extra={"pattern": syntax.PVE_TAG})]
_PveNode = Annotated[str, Field(max_length=63, json_schema_extra={"pattern": syntax.PVE_NODE})]
# capmox v0.7.7's vmIDRange bounds (ProxmoxMachineSpec.VMIDRange).
VMID_MIN, VMID_MAX = 100, 999_999_999


class VmIdRangeSpec(SpecModel):
    start: int = Field(ge=VMID_MIN, le=VMID_MAX)
    end: int = Field(ge=VMID_MIN, le=VMID_MAX, description="Inclusive; at least start.")

    def __len__(self) -> int:
        return max(0, self.end - self.start + 1)


class ProxmoxPoolSpec(SpecModel):
    """How capmox clones a worker: from which node and template, linked or full, into which pool."""

    source_node: str = Field(
        max_length=_NAME,
        description="Proxmox node holding the template: capmox clones templateID from it; beside templateTags "
        "only doctor reads it (capmox clones the selected template on its own node).",
    )
    template_tags: list[_PveTag] | None = Field(
        default=None,
        max_length=32,
        description="Exact tag set of the Talos template (or templateID).",
        # Atomic, not a set: repeats are harmless, the renderer sorts and deduplicates the tags.
        json_schema_extra={"minItems": 1},
    )
    template_id: int | None = Field(
        default=None, alias="templateID", ge=100, le=INT32_MAX, description="VMID of the template."
    )
    full: bool = Field(default=False, description="Full clone; linked clones (default) share the template's disk.")
    storage: str | None = Field(default=None, max_length=_NAME, description="Full clones only: target storage.")
    format: Literal["raw", "qcow2", "vmdk"] | None = Field(default=None, description="Full clones only.")
    pool: str | None = Field(
        default=None, max_length=_NAME, description="Proxmox resource pool: one ACL follows every VM."
    )
    disk_size_gb: int = Field(
        default=20, alias="diskSizeGB", ge=5, le=INT32_MAX, description="Boot disk size in GB."
    )
    network: ProxmoxNetworkSpec = Field(default_factory=ProxmoxNetworkSpec)
    allowed_nodes: list[_PveNode] | None = Field(
        default=None,
        max_length=64,
        description="This pool's nodes: a subset of the cluster's allowedNodes (default: all of them).",
        json_schema_extra={"x-kubernetes-list-type": "set"},
    )
    placement: Literal["any", "spread"] = Field(
        default="any",
        description="`spread`: one MachineDeployment per node, replicas split evenly; `any`: capmox chooses.",
    )
    per_node_templates: bool = Field(
        default=False,
        description="spread with templateTags: each node clones its own template, tagged `node-<node>` too "
        "(node-local storage).",
    )
    vm_id_range: VmIdRangeSpec | None = Field(
        default=None, alias="vmIDRange", description="VMIDs this pool's VMs take; disjoint from every other pool's."
    )
    tags: list[_PveTag] = Field(
        default_factory=list,
        max_length=32,
        description="Extra Proxmox tags on every VM of the pool.",
        json_schema_extra={"x-kubernetes-list-type": "set"},
    )
    owner_tags: bool = Field(
        default=True,
        description="Also tag each VM `tenantctl`, `tenant.<namespace>.<cluster>` and `nodepool.<pool>`.",
    )


class RollingUpdateSpec(SpecModel):
    max_surge: int = Field(default=1, ge=0, le=INT32_MAX)
    max_unavailable: int = Field(default=0, ge=0, le=INT32_MAX)


_DURATION_MAX = 32
_DURATION_SYNTAX: dict[str, Any] = {"pattern": syntax.GO_DURATION}


class HealthCheckSpec(SpecModel):
    max_unhealthy: str | int = Field(
        default="50%",
        description="Count or percentage (`50%`) of the pool.",
        json_schema_extra={"pattern": syntax.PERCENT_OR_INT, "minimum": 0, "maxLength": 16},
    )
    node_startup_timeout: str = Field(
        default="20m",
        max_length=_DURATION_MAX,
        description="Go duration (`20m`, `1h30m`, `1.5h`); at least 30s.",
        json_schema_extra=_DURATION_SYNTAX,
    )
    ready_unknown_timeout: str = Field(
        default="5m",
        max_length=_DURATION_MAX,
        description="Go duration; zero and negative refused.",
        json_schema_extra=_DURATION_SYNTAX,
    )
    ready_false_timeout: str = Field(
        default="10m",
        max_length=_DURATION_MAX,
        description="Go duration; zero and negative refused.",
        json_schema_extra=_DURATION_SYNTAX,
    )


class TaintSpec(SpecModel):
    key: str = Field(
        max_length=317,
        description="Qualified name; reserved domains refused as for labels.",
        json_schema_extra={"pattern": syntax.QUALIFIED_NAME},
    )
    value: str = Field(
        default="",
        max_length=63,
        description="Label-value syntax; may be empty.",
        json_schema_extra={"pattern": syntax.LABEL_VALUE},
    )
    effect: str = Field(
        max_length=32,
        description="NoSchedule, PreferNoSchedule or NoExecute.",
        json_schema_extra={"enum": list(TAINT_EFFECTS)},
    )


# Schema-only: `spec.checks` refuses a bad value with the label rules' own message.
_LabelValue = Annotated[str, Field(json_schema_extra={"maxLength": 63, "pattern": syntax.LABEL_VALUE})]


class NodePoolSpec(SpecModel):
    cluster: str = Field(
        max_length=63,
        description="Name of the TenantCluster in the same namespace.",
        json_schema_extra={"pattern": syntax.DNS_LABEL},
    )
    replicas: int | None = Field(default=None, ge=0, le=INT32_MAX, description="Fixed size (default 2).")
    min_replicas: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Autoscaled: lower bound (with maxReplicas)."
    )
    max_replicas: int | None = Field(
        default=None, ge=0, le=INT32_MAX, description="Autoscaled: upper bound (with minReplicas)."
    )
    autoscaling: AutoscalingSpec | None = Field(default=None, description="Autoscaled pools: autoscaler options.")
    resources: ResourcesSpec = Field(default_factory=ResourcesSpec)
    kubevirt: KubevirtPoolSpec = Field(default_factory=KubevirtPoolSpec)
    proxmox: ProxmoxPoolSpec | None = None
    rolling_update: RollingUpdateSpec = Field(default_factory=RollingUpdateSpec)
    health_check: HealthCheckSpec = Field(default_factory=HealthCheckSpec)
    labels: dict[str, _LabelValue] = Field(
        default_factory=dict,
        description="Labels of the pool's Nodes; `kubernetes.io`, `k8s.io`, `tenantctl.io` refused except "
        "`node-role.kubernetes.io/*` and `node-restriction.kubernetes.io/*`.",
    )
    taints: list[TaintSpec] = Field(
        default_factory=list,
        description="Taints the pool's Nodes register with (`key`, `value`, `effect`).",
        # A Node holds one taint per key and effect.
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["key", "effect"]},
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
