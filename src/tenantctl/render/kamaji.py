"""The hosted control plane: a KamajiControlPlane, with the Talos CSR signer as a sidecar."""

from __future__ import annotations

from typing import Any

from tenantctl.render.exposure import apiserver_network
from tenantctl.render.images import IMAGES
from tenantctl.render.meta import Names, object_meta
from tenantctl.render.versions import kubernetes_patch
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["KAMAJI_API", "KUBECONFIG_KEY", "render_kamaji_control_plane"]

KAMAJI_API = "controlplane.cluster.x-k8s.io/v1alpha1"
# Kamaji writes several kubeconfigs into the admin Secret; the in-cluster one is what our controllers use.
KUBECONFIG_KEY = "super-admin.svc"


def render_kamaji_control_plane(cluster: TenantCluster, observed: ObservedState | None) -> dict[str, Any]:
    """certSANs: the Service's DNS names, its address once observed (a worker dials the address), and
    the exposed host name."""
    names = Names(cluster)
    cert_sans = names.apiserver_dns_names(observed)
    if observed is not None and observed.endpoint not in cert_sans:
        cert_sans.append(observed.endpoint)
    return {
        "apiVersion": KAMAJI_API,
        "kind": "KamajiControlPlane",
        "metadata": object_meta(
            names.control_plane,
            names.namespace,
            names.cluster,
            labels={"cluster.x-k8s.io/role": "control-plane"},
            annotations={"kamaji.clastix.io/kubeconfig-secret-key": KUBECONFIG_KEY},
        ),
        "spec": {
            "replicas": cluster.spec.control_plane.replicas,
            "version": kubernetes_patch(cluster),
            "dataStoreName": cluster.spec.control_plane.data_store_name,
            "addons": {"konnectivity": {"server": {"port": 8132}}},
            "kubelet": {"cgroupfs": "systemd", "preferredAddressTypes": ["InternalIP", "ExternalIP"]},
            "network": apiserver_network(cluster, cert_sans),
            "deployment": {
                "extraContainers": [
                    {
                        "name": "talos-csr-signer",
                        "image": IMAGES["talos-csr-signer"],
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"name": "trustd", "containerPort": 50001, "protocol": "TCP"}],
                        "env": [
                            {
                                "name": "TALOS_TOKEN",
                                "valueFrom": {"secretKeyRef": {"name": names.talos_secrets, "key": "token"}},
                            }
                        ],
                        "volumeMounts": [
                            {"name": "talos-ca", "mountPath": "/etc/talos-ca", "readOnly": True},
                            {"name": "talos-tls-cert", "mountPath": "/etc/talos-server-crt", "readOnly": True},
                        ],
                    }
                ],
                "extraVolumes": [
                    {"name": "talos-ca", "secret": {"secretName": names.talos_ca}},
                    {"name": "talos-tls-cert", "secret": {"secretName": names.talos_tls}},
                ],
            },
        },
    }
