"""`TenantCluster`: what a tenant asks for — version, substrate, control plane, network, Talos, Proxmox."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.spec.base import SpecModel
from tenantctl.spec.versions import DEFAULT_KUBERNETES_MINOR, DEFAULT_TALOS_VERSION

__all__ = [
    "DEFAULT_SCHEMATIC_ID",
    "SUBSTRATES",
    "CCMSpec",
    "CSISpec",
    "ControlPlaneSpec",
    "IPv4ConfigSpec",
    "NetworkSpec",
    "ObjectMeta",
    "ProxmoxClusterSpec",
    "SchedulerHintsSpec",
    "StorageClassSpec",
    "TalosSpec",
    "TenantCluster",
    "TenantClusterSpec",
]

SUBSTRATES = ("kubevirt", "proxmox")
# The Image Factory schematic with no customisation: vanilla Talos.
DEFAULT_SCHEMATIC_ID = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"


class ObjectMeta(SpecModel):
    name: str
    namespace: str
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class ControlPlaneSpec(SpecModel):
    replicas: int = Field(default=2, ge=1, le=15)
    data_store_name: str = "default"


class NetworkSpec(SpecModel):
    """One definition of the tenant's networks: the Cluster object and the Talos worker config share it."""

    pod_cidr: str = Field(default="10.243.0.0/16", alias="podCIDR")
    service_cidr: str = Field(default="10.95.0.0/16", alias="serviceCIDR")
    cluster_domain: str = "cluster.local"


class TalosSpec(SpecModel):
    version: str = DEFAULT_TALOS_VERSION
    schematic_id: str = Field(default=DEFAULT_SCHEMATIC_ID, alias="schematicID")
    image_factory_url: str = Field(default="https://factory.talos.dev", alias="imageFactoryURL")
    installer_repository: str = "factory.talos.dev/installer"


class IPv4ConfigSpec(SpecModel):
    addresses: list[str]
    prefix: int
    gateway: str


class SchedulerHintsSpec(SpecModel):
    memory_adjustment: int | None = Field(default=None, ge=0)


class StorageClassSpec(SpecModel):
    name: str
    storage: str
    default: bool = False
    reclaim_policy: Literal["Delete", "Retain"] = "Delete"
    fstype: Literal["ext4", "xfs"] = "ext4"


class CCMSpec(SpecModel):
    credentials_secret_name: str | None = None


class CSISpec(SpecModel):
    enabled: bool = True
    credentials_secret_name: str | None = None
    storage_classes: list[StorageClassSpec] = Field(default_factory=list)


class ProxmoxClusterSpec(SpecModel):
    """Where a Proxmox tenant's workers live; credentials are named here, never carried."""

    credentials_secret_name: str | None = None
    allowed_nodes: list[str] = Field(default_factory=list)
    dns_servers: list[str] = Field(default_factory=list)
    ipv4_config: IPv4ConfigSpec | None = Field(default=None, alias="ipv4Config")
    scheduler_hints: SchedulerHintsSpec | None = None
    insecure: bool = False
    ccm: CCMSpec = Field(default_factory=CCMSpec)
    csi: CSISpec = Field(default_factory=CSISpec)


class TenantClusterSpec(SpecModel):
    version: str = DEFAULT_KUBERNETES_MINOR
    substrate: str = "kubevirt"
    control_plane: ControlPlaneSpec = Field(default_factory=ControlPlaneSpec)
    network: NetworkSpec = Field(default_factory=NetworkSpec)
    talos: TalosSpec = Field(default_factory=TalosSpec)
    os_image: str | None = None
    proxmox: ProxmoxClusterSpec | None = None


class TenantCluster(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["TenantCluster"]
    metadata: ObjectMeta
    spec: TenantClusterSpec = Field(default_factory=TenantClusterSpec)
