"""KubeVirt's cloud-controller-manager (kccm): runs here, watches this cluster's VMs through its
ServiceAccount and initialises the tenant's Nodes through the admin kubeconfig."""

from __future__ import annotations

from typing import Any

from tenantctl.render.addon_roles import KCCM_ROLE, bind_cluster_role
from tenantctl.render.controllers import (
    KUBECONFIG_MOUNT,
    KUBECONFIG_PATH,
    container,
    controller_deployment,
    kubeconfig_volume,
    service_account,
)
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import CAPI_CLUSTER_LABEL, Names, object_meta
from tenantctl.render.yaml_text import to_yaml
from tenantctl.spec import TenantCluster

__all__ = ["kccm_cloud_config", "render_kubevirt_ccm"]

_CLOUD_CONFIG_KEY = "cloud-config"
_CLOUD_CONFIG_DIR = "/etc/cloud"


def kccm_cloud_config(cluster: TenantCluster) -> str:
    """Infra objects kccm creates carry only the CAPI cluster label: never our inventory labels,
    or pruning would delete the LoadBalancer Services it made."""
    names = Names(cluster)
    config = {
        "namespace": names.namespace,
        "infraLabels": {CAPI_CLUSTER_LABEL: names.cluster},
        "loadBalancer": {
            "creationPollInterval": 5,
            "creationPollTimeout": 60,
            "enableEPSController": True,
            "selectorless": True,
        },
    }
    return to_yaml(config)


def render_kubevirt_ccm(cluster: TenantCluster, images: ImagesSpec) -> list[dict[str, Any]]:
    names = Names(cluster)
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": object_meta(names.kccm_cloud_config, names.namespace, names.cluster),
        "data": {_CLOUD_CONFIG_KEY: kccm_cloud_config(cluster)},
    }
    manager = container(
        "kubevirt-cloud-controller-manager",
        str(images.ref("kubevirt-ccm")),
        [
            "--cloud-provider=kubevirt",
            f"--cloud-config={_CLOUD_CONFIG_DIR}/{_CLOUD_CONFIG_KEY}",
            f"--kubeconfig={KUBECONFIG_PATH}",
            f"--cluster-name={names.cluster}",
        ],
        [("cloud-config", _CLOUD_CONFIG_DIR), ("kubeconfig", KUBECONFIG_MOUNT)],
        command=["/bin/kubevirt-cloud-controller-manager"],
    )
    deployment = controller_deployment(
        names,
        names.kccm,
        names.kccm,
        [manager],
        [{"name": "cloud-config", "configMap": {"name": names.kccm_cloud_config}}, kubeconfig_volume(names)],
        infra_access=True,
    )
    return [
        config_map,
        service_account(names, names.kccm),
        bind_cluster_role(names, names.kccm, names.kccm, KCCM_ROLE),
        deployment,
    ]
