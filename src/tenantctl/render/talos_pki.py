"""The Talos PKI as cert-manager objects: a 10-year Ed25519 CA and a 1-year trustd server certificate.

cert-manager generates the keys in the cluster, so no key material ever passes through a render.
"""

from __future__ import annotations

from typing import Any

from tenantctl.render.meta import Names, object_meta
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["CERT_MANAGER_API", "render_talos_pki"]

CERT_MANAGER_API = "cert-manager.io/v1"


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
                "dnsNames": names.apiserver_dns_names(observed),
                "usages": ["server auth", "digital signature"],
                "privateKey": {"algorithm": "Ed25519"},
                "issuerRef": {"name": ca_issuer, "kind": "Issuer", "group": "cert-manager.io"},
            },
        },
    ]
