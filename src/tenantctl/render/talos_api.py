"""The Talos API on workers: trustd (the csr-signer sidecar, port 50001) published on the apiserver Service.

Workers ask trustd for their apid certificate at the control-plane endpoint's host on 50001 (Talos
`internal/app/machined/pkg/controllers/secrets/api.go` with `k8s/static_endpoint.go`), so the port
must be on the Service whose address the worker config names. Kamaji control-plane provider v0.19.0
cannot ask for it; Kamaji's TenantControlPlane can (`spec.controlPlane.service.additionalPorts`, since
Kamaji 26.3.2-edge, commit 081b4c7), and the provider's mutate function never sets that field, so the
operator applies it there with its own field manager.
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.meta import Names
from tenantctl.spec import TenantCluster

__all__ = [
    "ADDITIONAL_PORTS_PATH",
    "KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS",
    "TENANT_CONTROL_PLANE_API",
    "TRUSTD_PORT",
    "trustd_service_port",
]

TENANT_CONTROL_PLANE_API = "kamaji.clastix.io/v1alpha1"
TRUSTD_PORT = 50001
KAMAJI_RELEASE_WITH_ADDITIONAL_PORTS = "26.3.2-edge"
# Where the field sits in the TenantControlPlane (and in its CRD's schema, under `properties`).
ADDITIONAL_PORTS_PATH = ("spec", "controlPlane", "service", "additionalPorts")


def trustd_service_port(cluster: TenantCluster) -> dict[str, Any]:
    """The apply configuration: only the field tenantctl owns on the TenantControlPlane.

    The provider names the TenantControlPlane after the KamajiControlPlane.
    """
    names = Names(cluster)
    port = {"name": "talos-trustd", "port": TRUSTD_PORT, "targetPort": TRUSTD_PORT, "protocol": "TCP"}
    return {
        "apiVersion": TENANT_CONTROL_PLANE_API,
        "kind": "TenantControlPlane",
        "metadata": {"name": names.control_plane, "namespace": names.namespace},
        "spec": {"controlPlane": {"service": {"additionalPorts": [port]}}},
    }
