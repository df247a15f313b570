"""The hosted control plane: a KamajiControlPlane, with the Talos CSR signer as a sidecar."""

from __future__ import annotations

from typing import Any

from tenantctl.render.apiserver_access import ApiServerAccess, apiserver_access
from tenantctl.render.control_plane_resources import CSR_SIGNER_RESOURCES, component_resources
from tenantctl.render.exposure import apiserver_network
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.images import SHARED_REGISTRY
from tenantctl.render.meta import Names, object_meta
from tenantctl.render.plain import plain_copy
from tenantctl.render.versions import konnectivity_version, kubernetes_patch
from tenantctl.spec import ObservedState, TenantCluster
from tenantctl.spec.versions import minor_of

__all__ = [
    "CONTROL_PLANE_COMPONENTS",
    "KAMAJI_API",
    "KUBECONFIG_KEY",
    "apiserver_flags",
    "control_plane_registry",
    "render_kamaji_control_plane",
]

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


def apiserver_flags(cluster: TenantCluster) -> list[str]:
    """The extra flags the KamajiControlPlane gives the tenant's apiserver (what its Deployment should carry)."""
    access = apiserver_access(cluster, minor_of(kubernetes_patch(cluster)), ImagesSpec())
    return list(_apiserver_extra_args(cluster, access).get("extraArgs") or [])


def _apiserver_extra_args(cluster: TenantCluster, access: ApiServerAccess) -> dict[str, Any]:
    """The spec's extra flags as `--name=value` (bare `--name` for an empty value) and the authentication
    and audit flags, sorted so the render is stable; no `extraArgs` key at all when there are none."""
    extra_args = cluster.spec.control_plane.api_server.extra_args
    flags = sorted([*(f"--{k}={v}" if v else f"--{k}" for k, v in extra_args.items()), *access.args])
    out: dict[str, Any] = {"extraArgs": flags} if flags else {}
    if access.mounts:
        out["extraVolumeMounts"] = access.mounts
    return out


# KamajiControlPlane field -> catalogue image; Kamaji runs `<spec.registry>/<containerImageName>:<spec.version>`.
CONTROL_PLANE_COMPONENTS = dict(zip(("apiServer", "controllerManager", "scheduler"), SHARED_REGISTRY, strict=True))


def _konnectivity(cluster: TenantCluster, images: ImagesSpec) -> dict[str, Any]:
    """Kamaji runs `<image>:<version>`; a version is set only where the table overrides its derivation."""
    version = konnectivity_version(cluster)
    server: dict[str, Any] = {
        "port": 8132,
        "image": images.repository("konnectivity-server"),
        "resources": component_resources("konnectivity", cluster.spec.control_plane.resources.konnectivity),
    }
    agent: dict[str, Any] = {"image": images.repository("konnectivity-agent")}
    if version is not None:
        server["version"] = agent["version"] = version
    return {"server": server, "agent": agent}


def control_plane_registry(images: ImagesSpec) -> str:
    """The one registry Kamaji takes for all three components (the platform check keeps them equal)."""
    return images.repository("kube-apiserver").rpartition("/")[0]


def render_kamaji_control_plane(
    cluster: TenantCluster, observed: ObservedState | None, images: ImagesSpec, access: ApiServerAccess
) -> dict[str, Any]:
    """certSANs: the Service's DNS names, its address once observed (a worker dials the address), and
    the exposed host name. `access`: the authentication and audit flags, mounts, volumes and sidecars
    (render.apiserver_access), rendered once with the ConfigMaps they mount."""
    names = Names(cluster)
    resources = cluster.spec.control_plane.resources
    version = kubernetes_patch(cluster)
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
            "version": version,
            "registry": control_plane_registry(images),
            # Without requests every tenant's apiserver is BestEffort: first evicted, refused under a quota.
            **{
                field: {
                    "containerImageName": images.repository(image).rpartition("/")[2],
                    "resources": component_resources(field, resources.component(field)),
                    **(_apiserver_extra_args(cluster, access) if field == "apiServer" else {}),
                }
                for field, image in CONTROL_PLANE_COMPONENTS.items()
            },
            "dataStoreName": cluster.spec.control_plane.data_store_name,
            "addons": {"konnectivity": _konnectivity(cluster, images)},
            "kubelet": {"cgroupfs": "systemd", "preferredAddressTypes": ["InternalIP", "ExternalIP"]},
            "network": apiserver_network(cluster, cert_sans),
            "deployment": {
                "extraContainers": [
                    {
                        "name": "talos-csr-signer",
                        "image": str(images.ref("talos-csr-signer")),
                        "imagePullPolicy": "IfNotPresent",
                        "ports": [{"name": "trustd", "containerPort": 50001, "protocol": "TCP"}],
                        "resources": plain_copy(CSR_SIGNER_RESOURCES),
                        "securityContext": plain_copy(_CSR_SIGNER_SECURITY_CONTEXT),
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
                    },
                    *access.containers,
                ],
                "extraVolumes": [
                    {"name": "talos-ca", "secret": {"secretName": names.talos_ca}},
                    {"name": "talos-tls-cert", "secret": {"secretName": names.talos_tls}},
                    *access.volumes,
                ],
            },
        },
    }
