"""The Talos PKI as cert-manager objects: a 10-year Ed25519 CA and a 1-year trustd server certificate.

cert-manager generates the keys in the cluster, so no key material ever passes through a render.
A worker dials trustd at every address it has for the control-plane endpoint — the endpoint's host,
what that host resolves to, and the tenant's `kubernetes` EndpointSlice — and verifies each as the
TLS server name (Talos `k8s/static_endpoint.go`, `client/resolver/roundrobin.go`). On proxmox that
host is the LoadBalancer address itself, so the certificate must name the observed address too.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from tenantctl.render.meta import Names, object_meta
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["CERT_MANAGER_API", "render_talos_pki"]

CERT_MANAGER_API = "cert-manager.io/v1"


def _server_names(cluster: TenantCluster, observed: ObservedState | None) -> dict[str, list[str]]:
    """The Service's DNS names, plus the observed address as an IP (or DNS) name once known."""
    dns = Names(cluster).apiserver_dns_names(observed)
    if observed is None:
        return {"dnsNames": dns}
    try:
        ipaddress.ip_address(observed.endpoint)
    except ValueError:
        return {"dnsNames": [*dns, observed.endpoint] if observed.endpoint not in dns else dns}
    return {"dnsNames": dns, "ipAddresses": [observed.endpoint]}


def render_talos_pki(cluster: TenantCluster, observed: ObservedState | None) -> list[dict[str, Any]]:
    names = Names(cluster)
    ns, c = names.namespace, names.cluster
    selfsigned, ca_issuer = f"{c}-talos-selfsigned", f"{c}-talos-ca-issuer"
    return [
        {
            "apiVersion": CERT_MANAGER_API,
            "kind": "Issuer",
            "metadata": object_meta(selfsigned, ns, c),
            "spec": {"selfSigned": {}},
        },
        {
            "apiVersion": CERT_MANAGER_API,
            "kind": "Certificate",
            "metadata": object_meta(names.talos_ca, ns, c),
            "spec": {
                "isCA": True,
                "commonName": "talos",
                "secretName": names.talos_ca,
                "duration": "87600h",
                "privateKey": {"algorithm": "Ed25519", "rotationPolicy": "Never"},
                "issuerRef": {"name": selfsigned, "kind": "Issuer", "group": "cert-manager.io"},
            },
        },
        {
            "apiVersion": CERT_MANAGER_API,
            "kind": "Issuer",
            "metadata": object_meta(ca_issuer, ns, c),
            "spec": {"ca": {"secretName": names.talos_ca}},
        },
        {
            "apiVersion": CERT_MANAGER_API,
            "kind": "Certificate",
            "metadata": object_meta(names.talos_tls, ns, c),
            "spec": {
                "secretName": names.talos_tls,
                "duration": "8760h",
                **_server_names(cluster, observed),
                "usages": ["server auth", "digital signature"],
                "privateKey": {"algorithm": "Ed25519"},
                "issuerRef": {"name": ca_issuer, "kind": "Issuer", "group": "cert-manager.io"},
            },
        },
    ]
