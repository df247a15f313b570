"""The Proxmox CSI driver, split so the hypervisor token stays in the management cluster.

The controller (driver + attacher, provisioner, resizer sidecars) runs here with `--kubeconfig` to the
tenant; the tenant gets the node plugin only, from the upstream chart with its controller scaled to
zero and `config.clusters` empty, so the chart renders no credential Secret there.
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.addons import CsiNodeRelease
from tenantctl.render.ccm_proxmox import render_proxmox_ccm
from tenantctl.render.controller_vmid import controller_vm_id
from tenantctl.render.controllers import (
    KUBECONFIG_MOUNT,
    KUBECONFIG_PATH,
    container,
    controller_deployment,
    kubeconfig_volume,
    service_account,
)
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import DEFAULT_CLASS_ANNOTATION, Names
from tenantctl.render.proxmox_config import (
    CONFIG_DIR,
    CONFIG_FILE,
    CONFIG_VOLUME,
    config_init_container,
    config_volumes,
)
from tenantctl.spec import ProxmoxClusterSpec, TenantCluster
from tenantctl.spec.storage import default_storage_class

__all__ = [
    "CONTROLLER_VMID_ANNOTATION",
    "PROXMOX_CSI_DRIVER",
    "STORAGE_CAPACITY_PATCH",
    "proxmox_csi_enabled",
    "proxmox_csi_node_release",
    "proxmox_csi_node_values",
    "render_proxmox_controllers",
    "render_proxmox_csi_controller",
]

PROXMOX_CSI_DRIVER = "csi.proxmox.sinextra.dev"
CONTROLLER_VMID_ANNOTATION = "tenantctl.io/csi-controller-vmid"
_SOCKET_VOLUME = "socket-dir"
_SOCKET = "unix:///csi/csi.sock"
# CSIStorageCapacity objects come from the provisioner sidecar, which runs here, not in the tenant; left
# true the tenant's scheduler refuses every pod with "node(s) did not have enough free storage".
STORAGE_CAPACITY_PATCH: dict[str, Any] = {
    "target": {"group": "storage.k8s.io", "version": "v1", "kind": "CSIDriver", "name": PROXMOX_CSI_DRIVER},
    "patch": "- op: replace\n  path: /spec/storageCapacity\n  value: false\n",
}


# The provisioner publishes no CSIStorageCapacity (no --enable-capacity): see STORAGE_CAPACITY_PATCH.
_SIDECARS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("csi-attacher", ()),
    ("csi-provisioner", ("--default-fstype=ext4", "--feature-gates=Topology=true")),
    ("csi-resizer", ()),
)


def _proxmox(cluster: TenantCluster) -> ProxmoxClusterSpec:
    assert cluster.spec.proxmox is not None, "checked by the spec: proxmox clusters have a proxmox block"
    return cluster.spec.proxmox


def proxmox_csi_enabled(cluster: TenantCluster) -> bool:
    return _proxmox(cluster).csi.enabled


def render_proxmox_csi_controller(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    """`features.provider` stays unset: the driver validates neither value and falls through to default."""
    names = Names(cluster)
    px = _proxmox(cluster)
    if not px.csi.enabled:
        return []
    secret = px.csi.credentials_secret_name
    assert secret, "checked by the spec: an enabled CSI names its credentials Secret"
    vmid = controller_vm_id(names.namespace, names.cluster)
    socket = [(_SOCKET_VOLUME, "/csi")]
    kubeconfig = [("kubeconfig", KUBECONFIG_MOUNT)]
    sidecar_args = ["--v=2", f"--csi-address={_SOCKET}", "--timeout=3m", f"--kubeconfig={KUBECONFIG_PATH}"]
    driver = container(
        "csi-driver",
        str(images.ref("proxmox-csi-controller")),
        ["--v=2", f"--csi-address={_SOCKET}", f"--cloud-config={CONFIG_FILE}", f"--kubeconfig={KUBECONFIG_PATH}"],
        [*socket, (CONFIG_VOLUME, CONFIG_DIR), *kubeconfig],
        writable=[_SOCKET_VOLUME],
    )
    sidecars = [
        container(
            name, str(images.ref(name)), [*sidecar_args, *extra], [*socket, *kubeconfig], writable=[_SOCKET_VOLUME]
        )
        for name, extra in _SIDECARS
    ]
    containers = [driver, *sidecars]
    return [
        service_account(names, names.csi_service_account),
        controller_deployment(
            names,
            names.csi_controller,
            names.csi_service_account,
            containers,
            [{"name": _SOCKET_VOLUME, "emptyDir": {}}, *config_volumes(secret), kubeconfig_volume(names)],
            init_containers=[config_init_container(px.insecure, {"controllerVmID": vmid}, images)],
            annotations={CONTROLLER_VMID_ANNOTATION: str(vmid)},
        ),
    ]


def proxmox_csi_node_values(cluster: TenantCluster, images: ImagesSpec) -> dict[str, Any]:
    """Node plugin only: `replicaCount: 0` (the chart has no switch for its controller) and no clusters.
    Exactly one class carries the default mark: the marked one, else the first."""
    px = _proxmox(cluster)
    default = default_storage_class(px.csi.storage_classes)
    classes: list[dict[str, Any]] = []
    for sc in px.csi.storage_classes:
        entry: dict[str, Any] = {
            "name": sc.name,
            "storage": sc.storage,
            "reclaimPolicy": sc.reclaim_policy,
            "fstype": sc.fstype,
        }
        if sc.name == default:
            entry["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true"}
        classes.append(entry)
    return {
        "replicaCount": 0,
        "config": {"clusters": []},
        "storageClass": classes,
        "node": {
            "plugin": {"image": _chart_image(images, "proxmox-csi-node")},
            "driverRegistrar": {"image": _chart_image(images, "csi-node-driver-registrar")},
        },
        "livenessprobe": {"image": _chart_image(images, "csi-livenessprobe")},
    }


def _chart_image(images: ImagesSpec, name: str) -> dict[str, str]:
    """The chart composes `repository:tag`, so a digest rides on the tag."""
    ref = images.ref(name)
    return {"repository": ref.repository, "tag": ref.tag_and_digest}


def proxmox_csi_node_release(cluster: TenantCluster, images: ImagesSpec) -> CsiNodeRelease | None:
    """None with `csi.enabled: false`: no node plugin, no controller, no token."""
    if not proxmox_csi_enabled(cluster):
        return None
    return CsiNodeRelease(
        chart="proxmox-csi",
        target_namespace="csi-proxmox",
        values=proxmox_csi_node_values(cluster, images),
        post_renderers=[{"kustomize": {"patches": [STORAGE_CAPACITY_PATCH]}}],
    )


def render_proxmox_controllers(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    """The CCM always (no switch), the CSI controller while CSI is enabled."""
    return [*render_proxmox_ccm(cluster, images), *render_proxmox_csi_controller(cluster, images)]
