"""`spec.expose` mapped onto the KamajiControlPlane's `network` (control-plane provider v0.19.0)."""

from __future__ import annotations

from typing import Any

from tenantctl.spec import TenantCluster
from tenantctl.spec.exposure import ExposeSpec, ExposeType, default_expose_type

__all__ = ["SSL_PASSTHROUGH", "apiserver_network", "expose_type"]

# The apiserver terminates TLS itself (client certificates): the ingress controller must pass it through.
SSL_PASSTHROUGH = {"nginx.ingress.kubernetes.io/ssl-passthrough": "true"}


def expose_type(cluster: TenantCluster) -> ExposeType:
    expose = cluster.spec.expose
    return (expose.type if expose else None) or default_expose_type(cluster.spec.substrate)


def _service_type(cluster: TenantCluster) -> str:
    """An Ingress reaches the apiserver Service from inside; the Service itself stays what the
    substrate's workers need (a Proxmox worker still dials the LoadBalancer address)."""
    kind = expose_type(cluster)
    return default_expose_type(cluster.spec.substrate) if kind == "Ingress" else kind


def apiserver_network(cluster: TenantCluster, cert_sans: list[str]) -> dict[str, Any]:
    """`certSANs` gains the public host name; the provider adds `:443` to an Ingress host itself."""
    expose = cluster.spec.expose or ExposeSpec()
    kind = expose_type(cluster)
    sans = list(cert_sans)
    if expose.hostname and expose.hostname not in sans:
        sans.append(expose.hostname)
    network: dict[str, Any] = {"serviceType": _service_type(cluster)}
    if kind == "LoadBalancer":
        if expose.address is not None:
            network["serviceAddress"] = expose.address
        lb: dict[str, Any] = {}
        if expose.load_balancer_class is not None:
            lb["loadBalancerClass"] = expose.load_balancer_class
        if expose.load_balancer_source_ranges:
            lb["loadBalancerSourceRanges"] = list(expose.load_balancer_source_ranges)
        if lb:
            network["loadBalancerConfig"] = lb
    elif kind == "Ingress":
        assert expose.hostname is not None, "checked by the spec: an Ingress has a hostname"
        ingress: dict[str, Any] = {"hostname": expose.hostname, "extraAnnotations": dict(SSL_PASSTHROUGH)}
        if expose.ingress_class_name is not None:
            ingress["className"] = expose.ingress_class_name
        network["ingress"] = ingress
    network["certSANs"] = sans
    return network
