"""`TenantCluster`: what a tenant asks for — version, substrate, control plane, network, Talos, Proxmox."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from tenantctl.spec import syntax
from tenantctl.spec.addons import AddonsSpec
from tenantctl.spec.backup import BackupSpec, RestoreSpec
from tenantctl.spec.base import SpecModel
from tenantctl.spec.control_plane import ApiServerSpec, ControlPlaneResourcesSpec
from tenantctl.spec.exposure import ExposeSpec
from tenantctl.spec.patch_policy import PatchUpgrades
from tenantctl.spec.patterns import INT64_MAX
from tenantctl.spec.versions import DEFAULT_KUBERNETES_MINOR, DEFAULT_TALOS_VERSION

__all__ = [
    "DEFAULT_SCHEMATIC_ID",
    "SUBSTRATES",
    "CCMSpec",
    "CSISpec",
    "ControlPlaneSpec",
    "IPv4ConfigSpec",
    "IPv6ConfigSpec",
    "KubevirtClusterSpec",
    "KubevirtStorageClassSpec",
    "NetworkSpec",
    "ObjectMeta",
    "ProxmoxClusterSpec",
    "RegistryMirrorSpec",
    "SchedulerHintsSpec",
    "StorageClassSpec",
    "TalosSpec",
    "TenantCluster",
    "TenantClusterSpec",
]

SUBSTRATES = ("kubevirt", "proxmox")
# The Image Factory schematic with no customisation: vanilla Talos.
DEFAULT_SCHEMATIC_ID = "376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba"


# Schema-only constraints (`json_schema_extra`) are the ones `spec.checks` judges with its own, clearer
# messages; the CRD generator turns them into the API server's schema. `max_length` bounds are real.
_NAME = 253
_URL = 2048
_IP = 45
_CIDR = 49
_SECRET_NAME_SYNTAX: dict[str, Any] = {"pattern": syntax.DNS_SUBDOMAIN}


class ObjectMeta(SpecModel):
    name: str
    namespace: str
    labels: dict[str, str] = Field(default_factory=dict)
    annotations: dict[str, str] = Field(default_factory=dict)


class ControlPlaneSpec(SpecModel):
    replicas: int = Field(default=2, ge=1, le=15, description="Kamaji apiserver replicas.")
    data_store_name: str = Field(
        default="default", max_length=_NAME, description="Kamaji DataStore holding the tenant's etcd data."
    )
    resources: ControlPlaneResourcesSpec = Field(default_factory=ControlPlaneResourcesSpec)
    api_server: ApiServerSpec = Field(default_factory=ApiServerSpec)


class NetworkSpec(SpecModel):
    """One definition of the tenant's networks: the Cluster object and the Talos worker config share it."""

    pod_cidr: str = Field(
        default="10.243.0.0/16", alias="podCIDR", max_length=_CIDR, description="Pod network of the tenant."
    )
    service_cidr: str = Field(
        default="10.95.0.0/16",
        alias="serviceCIDR",
        max_length=_CIDR,
        description="Service network; CoreDNS takes its 10th address.",
    )
    cluster_domain: str = Field(default="cluster.local", max_length=_NAME, description="The tenant's DNS domain.")


class RegistryMirrorSpec(SpecModel):
    """One entry of Talos `machine.registries.mirrors`: where workers pull a registry's images from."""

    endpoints: list[str] = Field(description="Mirror URLs tried in order (http(s)://host[:port][/path]).")
    skip_fallback: bool = Field(
        default=False, description="Never fall back to the upstream registry (enforces an air gap)."
    )
    override_path: bool = Field(default=False, description="The endpoint's path is used as is (no /v2 appended).")


class TalosSpec(SpecModel):
    version: str = Field(
        default=DEFAULT_TALOS_VERSION,
        max_length=32,
        description="Talos release; its minor sets the Kubernetes window.",
        json_schema_extra={"pattern": syntax.TALOS_VERSION},
    )
    schematic_id: str = Field(
        default=DEFAULT_SCHEMATIC_ID,
        alias="schematicID",
        max_length=64,
        description="Image Factory schematic (64 hex).",
        json_schema_extra={"pattern": syntax.SCHEMATIC_ID},
    )
    image_factory_url: str = Field(
        default="https://factory.talos.dev",
        alias="imageFactoryURL",
        max_length=_URL,
        description="Where KubeVirt disks come from.",
    )
    installer_repository: str = Field(
        default="factory.talos.dev/installer",
        max_length=_NAME,
        description="Installer image repository (both substrates).",
    )
    registry_mirrors: dict[str, RegistryMirrorSpec] = Field(
        default_factory=dict,
        description="Registry host (or `*`) -> mirror endpoints for the workers' image pulls (machine.registries).",
    )


class IPv4ConfigSpec(SpecModel):
    addresses: list[Annotated[str, Field(max_length=2 * _IP + 3)]] = Field(
        max_length=64,
        description="IPs, CIDRs or `a-b` ranges capmox hands to workers.",
        json_schema_extra={"minItems": 1},
    )
    prefix: int = Field(
        description="Prefix length of the worker subnet (0–32).", json_schema_extra={"minimum": 0, "maximum": 32}
    )
    gateway: str = Field(max_length=_IP, description="Default gateway; must lie in the addresses' subnet.")


class IPv6ConfigSpec(SpecModel):
    """The IPv6 half of dual-stack worker addresses; checked as ipv4Config is, per family."""

    addresses: list[Annotated[str, Field(max_length=2 * _IP + 3)]] = Field(
        max_length=64,
        description="IPv6 addresses, CIDRs or `a-b` ranges capmox hands to workers.",
        json_schema_extra={"minItems": 1},
    )
    prefix: int = Field(
        description="Prefix length of the worker subnet (0–128).", json_schema_extra={"minimum": 0, "maximum": 128}
    )
    gateway: str = Field(max_length=_IP, description="IPv6 default gateway; must lie in the addresses' subnet.")


class SchedulerHintsSpec(SpecModel):
    memory_adjustment: int | None = Field(
        default=None, ge=0, le=INT64_MAX, description="capmox memory overcommit, percent."
    )


class StorageClassSpec(SpecModel):
    name: str = Field(
        max_length=_NAME, description="StorageClass name in the tenant.", json_schema_extra=_SECRET_NAME_SYNTAX
    )
    storage: str = Field(max_length=_NAME, description="Proxmox storage id backing it.")
    default: bool = Field(
        default=False, description="The tenant's default StorageClass (at most one; none marked: the first)."
    )
    reclaim_policy: Literal["Delete", "Retain"] = "Delete"
    fstype: Literal["ext4", "xfs"] = "ext4"


class CCMSpec(SpecModel):
    credentials_secret_name: str | None = Field(
        default=None,
        max_length=_NAME,
        description="Secret (tenant namespace) with the CCM token; required on proxmox.",
        json_schema_extra=_SECRET_NAME_SYNTAX,
    )


class CSISpec(SpecModel):
    enabled: bool = Field(default=True, description="Proxmox CSI driver (controller here, node plugin in the tenant).")
    credentials_secret_name: str | None = Field(
        default=None,
        max_length=_NAME,
        description="Secret (tenant namespace) with the CSI token; required when enabled.",
        json_schema_extra=_SECRET_NAME_SYNTAX,
    )
    storage_classes: list[StorageClassSpec] = Field(
        default_factory=list,
        max_length=32,
        description="Tenant StorageClasses.",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    )


class KubevirtStorageClassSpec(SpecModel):
    name: str = Field(
        max_length=_NAME, description="StorageClass name in the tenant.", json_schema_extra=_SECRET_NAME_SYNTAX
    )
    infra_storage_class: str | None = Field(
        default=None,
        max_length=_NAME,
        description="Management-cluster StorageClass backing it (unset: that cluster's default).",
    )
    default: bool = Field(
        default=False, description="The tenant's default StorageClass (at most one; none marked: the first)."
    )


class KubevirtClusterSpec(SpecModel):
    storage_classes: list[KubevirtStorageClassSpec] = Field(
        default_factory=lambda: [KubevirtStorageClassSpec(name="kubevirt")],
        max_length=32,
        description="Tenant StorageClasses of the KubeVirt CSI driver (default: one, `kubevirt`).",
        json_schema_extra={"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    )


class ProxmoxClusterSpec(SpecModel):
    """Where a Proxmox tenant's workers live; credentials are named here, never carried."""

    credentials_secret_name: str | None = Field(
        default=None,
        max_length=_NAME,
        description="Secret (tenant namespace) with capmox's credentials; required.",
        json_schema_extra=_SECRET_NAME_SYNTAX,
    )
    allowed_nodes: list[Annotated[str, Field(max_length=63, json_schema_extra={"pattern": syntax.PVE_NODE})]] = Field(
        default_factory=list,
        max_length=64,
        description="Proxmox nodes workers may run on; required.",
        json_schema_extra={"x-kubernetes-list-type": "set"},
    )
    dns_servers: list[Annotated[str, Field(max_length=_IP)]] = Field(
        default_factory=list, max_length=8, description="Literal IPs the workers resolve through; required."
    )
    ipv4_config: IPv4ConfigSpec | None = Field(
        default=None, alias="ipv4Config", description="Worker address pool (capmox has no DHCP); required."
    )
    ipv6_config: IPv6ConfigSpec | None = Field(
        default=None, alias="ipv6Config", description="Dual-stack: the workers' IPv6 address pool (with ipv4Config)."
    )
    scheduler_hints: SchedulerHintsSpec | None = None
    insecure: bool = Field(default=False, description="Accept a self-signed Proxmox certificate.")
    ccm: CCMSpec = Field(default_factory=CCMSpec)
    csi: CSISpec = Field(default_factory=CSISpec)

    @property
    def address_configs(self) -> list[tuple[int, IPv4ConfigSpec | IPv6ConfigSpec]]:
        """(IP version, config) of each family the workers' default NIC gets an address of."""
        configs: tuple[tuple[int, IPv4ConfigSpec | IPv6ConfigSpec | None], ...] = (
            (4, self.ipv4_config), (6, self.ipv6_config),
        )
        return [(version, config) for version, config in configs if config is not None]


class TenantClusterSpec(SpecModel):
    version: str = Field(
        default=DEFAULT_KUBERNETES_MINOR,
        max_length=32,
        description="Kubernetes minor (patch from the versions table) or patch.",
        json_schema_extra={"pattern": syntax.KUBE_VERSION},
    )
    substrate: str = Field(
        default="kubevirt",
        max_length=16,
        description="`kubevirt` or `proxmox`: where workers run.",
        json_schema_extra={"enum": list(SUBSTRATES)},
    )
    control_plane: ControlPlaneSpec = Field(default_factory=ControlPlaneSpec)
    network: NetworkSpec = Field(default_factory=NetworkSpec)
    talos: TalosSpec = Field(default_factory=TalosSpec)
    os_image: str | None = Field(
        default=None, max_length=_URL, description="KubeVirt only: worker disk image URL override."
    )
    proxmox: ProxmoxClusterSpec | None = Field(default=None, description="Required on substrate proxmox.")
    expose: ExposeSpec | None = Field(default=None, description="How the tenant's API is reached from outside.")
    kubevirt: KubevirtClusterSpec = Field(default_factory=KubevirtClusterSpec)
    addons: AddonsSpec = Field(default_factory=AddonsSpec)
    patch_upgrades: PatchUpgrades | None = Field(
        default=None,
        description="When a live tenant takes a newer patch of its minor (default: the Platform's, else Manual).",
    )
    backup: BackupSpec | None = Field(
        default=None, description="Scheduled, encrypted backups of the control plane's data to S3 (docs/backup.md)."
    )
    restore: RestoreSpec | None = Field(
        default=None, description="Start this new tenant from a backup of another (docs/backup.md)."
    )


class TenantCluster(SpecModel):
    api_version: Literal["tenantctl.io/v1alpha1"]
    kind: Literal["TenantCluster"]
    metadata: ObjectMeta
    spec: TenantClusterSpec = Field(default_factory=TenantClusterSpec)
