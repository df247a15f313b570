"""What differs between substrates, as one table instead of branches scattered through the renderer."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tenantctl.render.addons import CsiNodeRelease
from tenantctl.render.csi_proxmox import proxmox_csi_node_release, render_proxmox_controllers
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.kubevirt import render_kubevirt_cluster, render_kubevirt_machine_template
from tenantctl.render.kubevirt_csi import render_kubevirt_controllers
from tenantctl.render.kubevirt_csi_node import KUBEVIRT_CSI_DRIVER, render_kubevirt_csi_node
from tenantctl.render.proxmox import render_address_pools, render_proxmox_cluster, render_proxmox_machine_template
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.placement import NodeGroup

__all__ = ["SUBSTRATES", "Substrate"]


@dataclass(frozen=True)
class Substrate:
    name: str
    install_disk: str
    # Proxmox nodes are initialised by the external CCM (region/zone, providerID).
    external_cloud_provider: bool
    render_infra_cluster: Callable[[TenantCluster], dict[str, Any]]
    render_machine_template: Callable[[TenantCluster, NodePool, NodeGroup], dict[str, Any]]
    # Objects of a pool besides its templates and MachineDeployments (Proxmox: its NICs' address pools).
    render_pool_objects: Callable[[TenantCluster, NodePool], list[dict[str, Any]]]
    # The resource of that template, which the cluster-autoscaler reads (scale from zero).
    machine_templates: str
    # The cloud-controller-manager and CSI controller that drive the tenant from its namespace here.
    render_controllers: Callable[[TenantCluster, ImagesSpec], list[dict[str, Any]]]
    csi_node_release: Callable[[TenantCluster, ImagesSpec], CsiNodeRelease | None]
    # Catalogue images the CSI node release's values set (listed by `tenantctl images`).
    csi_node_images: tuple[str, ...]
    # Objects the operator applies inside the tenant besides the bootstrap token and node RBAC.
    render_tenant_objects: Callable[[TenantCluster, ImagesSpec], list[dict[str, Any]]]
    # The CSI driver a VolumeSnapshotClass names, or None where the driver cannot take snapshots.
    snapshot_driver: str | None


def _none(cluster: TenantCluster, images: ImagesSpec) -> None:
    return None


def _no_objects(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    return []


def _no_pool_objects(cluster: TenantCluster, pool: NodePool) -> list[dict[str, Any]]:
    return []


SUBSTRATES: dict[str, Substrate] = {
    "kubevirt": Substrate(
        name="kubevirt",
        install_disk="/dev/vda",
        external_cloud_provider=False,
        render_infra_cluster=render_kubevirt_cluster,
        render_machine_template=render_kubevirt_machine_template,
        render_pool_objects=_no_pool_objects,
        machine_templates="kubevirtmachinetemplates",
        render_controllers=render_kubevirt_controllers,
        csi_node_release=_none,
        csi_node_images=(),
        render_tenant_objects=render_kubevirt_csi_node,
        # The controller's snapshotter sidecar: the driver snapshots the backing PVC in this cluster.
        snapshot_driver=KUBEVIRT_CSI_DRIVER,
    ),
    "proxmox": Substrate(
        name="proxmox",
        install_disk="/dev/sda",
        external_cloud_provider=True,
        render_infra_cluster=render_proxmox_cluster,
        render_machine_template=render_proxmox_machine_template,
        render_pool_objects=render_address_pools,
        machine_templates="proxmoxmachinetemplates",
        render_controllers=render_proxmox_controllers,
        csi_node_release=proxmox_csi_node_release,
        csi_node_images=("proxmox-csi-node", "csi-node-driver-registrar", "csi-livenessprobe"),
        render_tenant_objects=_no_objects,
        # proxmox-csi-plugin's snapshots are experimental full copies that need root@pam password
        # credentials (docs/volumesnapshot.md); the controller here holds a scoped API token, so a
        # VolumeSnapshotClass would only leave every VolumeSnapshot pending.
        snapshot_driver=None,
    ),
}
