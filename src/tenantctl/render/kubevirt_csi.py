"""KubeVirt's CSI driver: the controller runs here (hot-plugs DataVolumes into the worker VMs of this
namespace) with `--run-node-service=false`; the tenant gets the node plugin as objects tenantctl renders
(`render/kubevirt_csi_node.py`). The snapshotter sidecar serves the tenant's VolumeSnapshots: the driver
snapshots the backing PVC here, so the management cluster needs snapshot support for the infra class."""

from __future__ import annotations

from typing import Any

from tenantctl.render.addon_roles import KCSI_ROLE, KCSI_VOLUMES_ROLE, bind_cluster_role, bind_cluster_role_cluster_wide
from tenantctl.render.controllers import (
    KUBECONFIG_MOUNT,
    KUBECONFIG_PATH,
    container,
    controller_deployment,
    kubeconfig_volume,
    service_account,
)
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.kubevirt_ccm import render_kubevirt_ccm
from tenantctl.render.meta import CAPI_CLUSTER_LABEL, Names
from tenantctl.spec import TenantCluster

__all__ = [
    "render_kubevirt_controllers",
    "render_kubevirt_csi_controller",
]

_SOCKET_VOLUME = "socket-dir"
_SOCKET_DIR = "/var/lib/csi/sockets/pluginproxy"
_SOCKET = f"{_SOCKET_DIR}/csi.sock"
_HEALTH_PORT = 10301
_SIDECARS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("csi-provisioner", ("--default-fstype=ext4",)),
    ("csi-attacher", ()),
    ("csi-resizer", ()),
    ("csi-snapshotter", ()),
)


def render_kubevirt_csi_controller(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    names = Names(cluster)
    socket = [(_SOCKET_VOLUME, _SOCKET_DIR)]
    kubeconfig = [("kubeconfig", KUBECONFIG_MOUNT)]
    sidecar_args = [f"--csi-address={_SOCKET}", f"--kubeconfig={KUBECONFIG_PATH}", "--v=2", "--timeout=3m"]
    containers = [
        container(
            "csi-driver",
            str(images.ref("kubevirt-csi-driver")),
            [
                f"--endpoint=unix://{_SOCKET}",
                f"--infra-cluster-namespace={names.namespace}",
                f"--infra-cluster-labels={CAPI_CLUSTER_LABEL}={names.cluster}",
                "--run-node-service=false",
                "--v=2",
            ],
            [*socket, *kubeconfig],
            writable=[_SOCKET_VOLUME],
            extra={
                "ports": [{"name": "healthz", "containerPort": _HEALTH_PORT, "protocol": "TCP"}],
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "healthz"}, "periodSeconds": 30},
            },
        ),
        *(
            container(
                name, str(images.ref(name)), [*sidecar_args, *extra], [*socket, *kubeconfig], writable=[_SOCKET_VOLUME]
            )
            for name, extra in _SIDECARS
        ),
        container(
            "csi-liveness-probe",
            str(images.ref("csi-livenessprobe")),
            [f"--csi-address={_SOCKET}", "--probe-timeout=3s", f"--health-port={_HEALTH_PORT}"],
            socket,
            writable=[_SOCKET_VOLUME],
        ),
    ]
    return [
        service_account(names, names.kubevirt_csi),
        bind_cluster_role(names, names.kubevirt_csi, names.kubevirt_csi, KCSI_ROLE),
        bind_cluster_role_cluster_wide(names, names.kubevirt_csi_cluster_role, names.kubevirt_csi, KCSI_VOLUMES_ROLE),
        controller_deployment(
            names,
            names.kubevirt_csi_controller,
            names.kubevirt_csi,
            containers,
            [{"name": _SOCKET_VOLUME, "emptyDir": {}}, kubeconfig_volume(names)],
            infra_access=True,
        ),
    ]


def render_kubevirt_controllers(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    return [*render_kubevirt_ccm(cluster, images), *render_kubevirt_csi_controller(cluster, images)]
