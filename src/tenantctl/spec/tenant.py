"""`TenantCluster`: what a tenant asks for — version, substrate, control plane, network, Talos, Proxmox."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tenantctl.spec.base import SpecModel
from tenantctl.spec.patterns import INT64_MAX
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
    replicas: int = Field(default=2, ge=1, le=15, description="Kamaji apiserver replicas.")
    data_store_name: str = Field(default="default", description="Kamaji DataStore holding the tenant's etcd data.")


class NetworkSpec(SpecModel):
    """One definition of the tenant's networks: the Cluster object and the Talos worker config share it."""

    pod_cidr: str = Field(default="10.243.0.0/16", alias="podCIDR", description="Pod network of the tenant.")
    service_cidr: str = Field(
        default="10.95.0.0/16", alias="serviceCIDR", description="Service network; CoreDNS takes its 10th address."
    )
    cluster_domain: str = Field(default="cluster.local", description="The tenant's DNS domain.")


class TalosSpec(SpecModel):
    version: str = Field(
        default=DEFAULT_TALOS_VERSION, description="Talos release; its minor sets the Kubernetes window."
    )
    schematic_id: str = Field(
        default=DEFAULT_SCHEMATIC_ID, alias="schematicID", description="Image Factory schematic (64 hex)."
    )
    image_factory_url: str = Field(
        default="https://factory.talos.dev", alias="imageFactoryURL", description="Where KubeVirt disks come from."
    )
    installer_repository: str = Field(
        default="factory.talos.dev/installer", description="Installer image repository (both substrates)."
    )


class IPv4ConfigSpec(SpecModel):
    addresses: list[str] = Field(description="IPs, CIDRs or `a-b` ranges capmox hands to workers.")
    prefix: int = Field(description="Prefix length of the worker subnet (0–32).")
    gateway: str = Field(description="Default gateway; must lie in the addresses' subnet.")


class SchedulerHintsSpec(SpecModel):
    memory_adjustment: int | None = Field(
        default=None, ge=0, le=INT64_MAX, description="capmox memory overcommit, percent."
    )


class StorageClassSpec(SpecModel):
    name: str = Field(description="StorageClass name in the tenant.")
    storage: str = Field(description="Proxmox storage id backing it.")
    default: bool = Field(default=False, description="Mark as the tenant's default StorageClass.")
    reclaim_policy: Literal["Delete", "Retain"] = "Delete"
    fstype: Literal["ext4", "xfs"] = "ext4"


class CCMSpec(SpecModel):
    credentials_secret_name: str | None = Field(
        default=None, description="Secret (tenant namespace) with the CCM token; required on proxmox."
    )


class CSISpec(SpecModel):
    enabled: bool = Field(default=True, description="Proxmox CSI driver (controller here, node plugin in the tenant).")
    credentials_secret_name: str | None = Field(
        default=None, description="Secret (tenant namespace) with the CSI token; required when enabled."
    )
    storage_classes: list[StorageClassSpec] = Field(default_factory=list, description="Tenant StorageClasses.")


class ProxmoxClusterSpec(SpecModel):
    """Where a Proxmox tenant's workers live; credentials are named here, never carried."""

    credentials_secret_name: str | None = Field(
        default=None, description="Secret (tenant namespace) with capmox's credentials; required."
    )
    allowed_nodes: list[str] = Field(default_factory=list, description="Proxmox nodes workers may run on; required.")
    dns_servers: list[str] = Field(
        default_factory=list, description="Literal IPs the workers resolve through; required."
    )
    ipv4_config: IPv4ConfigSpec | None = Field(
        default=None, alias="ipv4Config", description="Worker address pool (capmox has no DHCP); required."
    )
    scheduler_hints: SchedulerHintsSpec | None = None
    insecure: bool = Field(default=False, description="Accept a self-signed Proxmox certificate.")
    ccm: CCMSpec = Field(default_factory=CCMSpec)
    csi: CSISpec = Field(default_factory=CSISpec)


class TenantClusterSpec(SpecModel):
    version: str = Field(
        default=DEFAULT_KUBERNETES_MINOR, description="Kubernetes minor (patch from the versions table) or patch."
    )
    substrate: str = Field(default="kubevirt", description="`kubevirt` or `proxmox`: where workers run.")
    control_plane: ControlPlaneSpec = Field(default_factory=ControlPlaneSpec)
    network: NetworkSpec = Field(default_factory=NetworkSpec)
    talos: TalosSpec = Field(default_factory=TalosSpec)
    os_image: str | None = Field(default=None, description="KubeVirt only: worker disk image URL override.")
    proxmox: ProxmoxClusterSpec | None = Field(default=None, description="Required on substrate proxmox.")


class TenantCluster(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["TenantCluster"]
    metadata: ObjectMeta
    spec: TenantClusterSpec = Field(default_factory=TenantClusterSpec)
