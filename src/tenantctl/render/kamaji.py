"""The hosted control plane: a KamajiControlPlane, with the Talos CSR signer as a sidecar."""

from __future__ import annotations

import copy
from typing import Any

from tenantctl.render.control_plane_resources import CSR_SIGNER_RESOURCES, component_resources
from tenantctl.render.images import IMAGES
from tenantctl.render.meta import Names, object_meta
from tenantctl.render.versions import kubernetes_patch
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["KAMAJI_API", "KUBECONFIG_KEY", "render_kamaji_control_plane"]

KAMAJI_API = "controlplane.cluster.x-k8s.io/v1alpha1"
# Kamaji writes several kubeconfigs into the admin Secret; the in-cluster one is what our controllers use.
KUBECONFIG_KEY = "super-admin.svc"
# The sidecar only reads its mounted Secrets and listens on 50001: nothing needs root, a capability or a
# writable root filesystem. 65532 is the distroless `nonroot` user the published builds run as.
_CSR_SIGNER_SECURITY_CONTEXT: dict[str, Any] = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "runAsUser": 65532,
    "capabilities": {"drop": ["ALL"]},
    "seccompProfile": {"type": "RuntimeDefault"},
}


def _apiserver(cluster: TenantCluster) -> dict[str, Any]:
    """Resources, and the spec's extra flags as `--name=value` (bare `--name` for an empty value), sorted
    so the render is stable; no `extraArgs` key at all when there are none."""
    control_plane = cluster.spec.control_plane
    out: dict[str, Any] = {"resources": component_resources("apiServer", control_plane.resources.api_server)}
    extra_args = control_plane.api_server.extra_args
    if extra_args:
        out["extraArgs"] = [f"--{k}={v}" if v else f"--{k}" for k, v in sorted(extra_args.items())]
    return out


def render_kamaji_control_plane(
    cluster: TenantCluster, service_type: str, observed: ObservedState | None
) -> dict[str, Any]:
    """certSANs: the Service's DNS names, plus its address once observed (a worker dials the address)."""
    names = Names(cluster)
    resources = cluster.spec.control_plane.resources
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
            # Without requests every tenant's apiserver is BestEffort: first evicted, refused under a quota.
            "apiServer": _apiserver(cluster),
            "controllerManager": {"resources": component_resources("controllerManager", resources.controller_manager)},
            "scheduler": {"resources": component_resources("scheduler", resources.scheduler)},
            "addons": {
                "konnectivity": {
                    "server": {"port": 8132, "resources": component_resources("konnectivity", resources.konnectivity)}
                }
            },
            "kubelet": {"cgroupfs": "systemd", "preferredAddressTypes": ["InternalIP", "ExternalIP"]},
            "network": {"serviceType": service_type, "certSANs": cert_sans},
            "deployment": {
                "extraContainers": [
                    {
                        "name": "talos-csr-signer",
                        "image": IMAGES["talos-csr-signer"],
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"name": "trustd", "containerPort": 50001, "protocol": "TCP"}],
                        "resources": copy.deepcopy(CSR_SIGNER_RESOURCES),
                        "securityContext": copy.deepcopy(_CSR_SIGNER_SECURITY_CONTEXT),
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
