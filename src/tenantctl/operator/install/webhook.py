"""What serves the validating webhook: its configuration, Service and cert-manager serving certificate.

The API server calls the operator's webhook over TLS; cert-manager issues the certificate (a
self-signed Issuer: the API server trusts it through the CA bundle cert-manager's cainjector writes
into the configuration, named by the `inject-ca-from` annotation). `failurePolicy: Fail`: a tenant
object that was not judged is not admitted. Only the main resources are matched, never `/status`,
so the operator's status writes never wait on its own webhook.
"""

from __future__ import annotations

from typing import Any

from tenantctl.spec.crds import CRD_GROUP, CRD_VERSION

__all__ = [
    "CERT_DIR",
    "CLUSTER_WEBHOOK",
    "POOL_WEBHOOK",
    "PORT",
    "TLS_VOLUME",
    "tls_volume",
    "webhook_args",
    "webhook_objects",
]

PORT = 9443
CERT_DIR = "/tls"
TLS_VOLUME = "webhook-tls"
TIMEOUT_SECONDS = 10
# kopf handler ids; kopf serves each handler at `/<id>`.
CLUSTER_WEBHOOK = "validate-tenantcluster"
POOL_WEBHOOK = "validate-nodepool"
# (plural, handler id, operations): a cluster's DELETE is judged (its pools must go first).
_WEBHOOKS = (
    ("tenantclusters", CLUSTER_WEBHOOK, ["CREATE", "UPDATE", "DELETE"]),
    ("nodepools", POOL_WEBHOOK, ["CREATE", "UPDATE"]),
)


def _names(name: str) -> dict[str, str]:
    return {
        "service": f"{name}-webhook",
        "certificate": f"{name}-webhook",
        "secret": f"{name}-webhook-tls",
        "issuer": f"{name}-selfsigned",
    }


def webhook_args() -> list[str]:
    """The operator's arguments that serve the webhook with the mounted certificate."""
    return ["--webhook-port", str(PORT), "--webhook-cert-dir", CERT_DIR]


def tls_volume(name: str) -> dict[str, Any]:
    return {"name": TLS_VOLUME, "secret": {"secretName": _names(name)["secret"]}}


def webhook_objects(name: str, namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    """Issuer, Certificate, Service and the ValidatingWebhookConfiguration, in apply order."""
    names = _names(name)
    service = names["service"]
    meta = {"namespace": namespace, "labels": dict(labels)}
    return [
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Issuer",
            "metadata": {"name": names["issuer"], **meta},
            "spec": {"selfSigned": {}},
        },
        {
            "apiVersion": "cert-manager.io/v1",
            "kind": "Certificate",
            "metadata": {"name": names["certificate"], **meta},
            "spec": {
                "secretName": names["secret"],
                "dnsNames": [f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local"],
                "issuerRef": {"name": names["issuer"], "kind": "Issuer", "group": "cert-manager.io"},
                "privateKey": {"algorithm": "ECDSA", "size": 256, "rotationPolicy": "Always"},
                "usages": ["server auth", "digital signature", "key encipherment"],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": service, **meta},
            "spec": {
                "selector": {"app.kubernetes.io/name": name},
                "ports": [{"name": "webhook", "port": 443, "targetPort": "webhook", "protocol": "TCP"}],
            },
        },
        _configuration(name, namespace, labels, names),
    ]


def _configuration(name: str, namespace: str, labels: dict[str, str], names: dict[str, str]) -> dict[str, Any]:
    """The ValidatingWebhookConfiguration: one webhook per kind, its CA injected by cert-manager."""
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {
            "name": name,
            "labels": dict(labels),
            "annotations": {"cert-manager.io/inject-ca-from": f"{namespace}/{names['certificate']}"},
        },
        "webhooks": [
            {
                "name": f"validate.{plural}.{CRD_GROUP}",
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Fail",
                "matchPolicy": "Equivalent",
                "timeoutSeconds": TIMEOUT_SECONDS,
                "clientConfig": {
                    "service": {"name": names["service"], "namespace": namespace, "path": f"/{handler}", "port": 443}
                },
                "rules": [
                    {
                        "apiGroups": [CRD_GROUP],
                        "apiVersions": [CRD_VERSION],
                        "operations": operations,
                        "resources": [plural],
                        "scope": "Namespaced",
                    }
                ],
            }
            for plural, handler, operations in _WEBHOOKS
        ],
    }
