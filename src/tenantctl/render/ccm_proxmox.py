"""The Proxmox cloud-controller-manager: the link between `--cloud-provider=external` and storage.

It clears the kubelet's `node.cloudprovider.kubernetes.io/uninitialized` taint, writes providerID and
the `topology.kubernetes.io/region|zone` labels the CSI node plugin exits without. It runs here, in the
tenant's namespace of the management cluster, because it holds a hypervisor token and the tenant is
cluster-admin of its own cluster. No enabled switch: without it nothing in the tenant ever schedules.
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.controllers import (
    KUBECONFIG_MOUNT,
    KUBECONFIG_PATH,
    container,
    controller_deployment,
    kubeconfig_volume,
    service_account,
)
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import Names
from tenantctl.render.proxmox_config import (
    CONFIG_DIR,
    CONFIG_FILE,
    CONFIG_VOLUME,
    config_init_container,
    config_volumes,
)
from tenantctl.spec import ProxmoxClusterSpec, TenantCluster

__all__ = ["CCM_FEATURES", "CCM_PORT", "render_proxmox_ccm"]

# capmox mode: capmox already wrote proxmox://<SMBIOS UUID> on the Machine; the default mode would
# write proxmox://<node>/<vmid> on the Node and the two would disagree about the same VM.
CCM_FEATURES = {"provider": "capmox"}
CCM_PORT = 10258
# cloud-node initialises Nodes, cloud-node-lifecycle removes those whose VM is gone. Routes are
# Cilium's and Proxmox offers no load balancer, so the route and service controllers stay off.
_CONTROLLERS = "cloud-node,cloud-node-lifecycle"


def _proxmox(cluster: TenantCluster) -> ProxmoxClusterSpec:
    assert cluster.spec.proxmox is not None, "checked by the spec: proxmox clusters have a proxmox block"
    return cluster.spec.proxmox


def render_proxmox_ccm(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    """ServiceAccount (no RBAC: it acts as the tenant's admin, never on this cluster) and Deployment."""
    names = Names(cluster)
    px = _proxmox(cluster)
    secret = px.ccm.credentials_secret_name
    assert secret, "checked by the spec: proxmox clusters name the CCM credentials Secret"
    manager = container(
        "cloud-controller-manager",
        str(images.ref("proxmox-ccm")),
        [
            "--v=2",
            "--cloud-provider=proxmox",
            f"--cloud-config={CONFIG_FILE}",
            f"--controllers={_CONTROLLERS}",
            "--leader-elect=false",
            f"--kubeconfig={KUBECONFIG_PATH}",
            f"--authentication-kubeconfig={KUBECONFIG_PATH}",
            f"--authorization-kubeconfig={KUBECONFIG_PATH}",
            f"--secure-port={CCM_PORT}",
            "--authorization-always-allow-paths=/healthz,/livez,/readyz,/metrics",
        ],
        [(CONFIG_VOLUME, CONFIG_DIR), ("kubeconfig", KUBECONFIG_MOUNT)],
        extra={
            "livenessProbe": {
                "httpGet": {"path": "/healthz", "port": CCM_PORT, "scheme": "HTTPS"},
                "initialDelaySeconds": 20,
                "periodSeconds": 30,
            }
        },
    )
    return [
        service_account(names, names.ccm),
        controller_deployment(
            names,
            names.ccm,
            names.ccm,
            [manager],
            [*config_volumes(secret), kubeconfig_volume(names)],
            init_containers=[config_init_container(px.insecure, CCM_FEATURES, images)],
        ),
    ]
