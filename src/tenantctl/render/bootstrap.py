"""Objects applied *inside* a tenant through its admin kubeconfig once the apiserver answers:
the bootstrap token Talos workers join with, and the RBAC that lets them."""

from __future__ import annotations

from typing import Any

from tenantctl.render.meta import cluster_labels
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["BOOTSTRAPPERS_GROUP", "render_tenant_bootstrap_objects"]

BOOTSTRAPPERS_GROUP = "system:bootstrappers:talos"
_RBAC_API = "rbac.authorization.k8s.io/v1"

# (binding name, cluster role, subject group): the node-bootstrap path of kubelet TLS bootstrapping.
_BINDINGS: tuple[tuple[str, str, str], ...] = (
    ("tenantctl:talos-node-bootstrapper", "system:node-bootstrapper", BOOTSTRAPPERS_GROUP),
    (
        "tenantctl:talos-nodeclient-autoapprove",
        "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
        BOOTSTRAPPERS_GROUP,
    ),
    (
        "tenantctl:talos-selfnodeclient-autoapprove",
        "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
        "system:nodes",
    ),
)


def render_tenant_bootstrap_objects(cluster: TenantCluster, observed: ObservedState) -> list[dict[str, Any]]:
    labels = cluster_labels(cluster.metadata.name)
    secrets = observed.talos_secrets
    token_secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "bootstrap.kubernetes.io/token",
        "metadata": {
            "name": f"bootstrap-token-{secrets.bootstrap_token_id}",
            "namespace": "kube-system",
            "labels": labels,
        },
        "stringData": {
            "token-id": secrets.bootstrap_token_id,
            "token-secret": secrets.bootstrap_token_secret,
            "usage-bootstrap-authentication": "true",
            "usage-bootstrap-signing": "true",
            "auth-extra-groups": BOOTSTRAPPERS_GROUP,
        },
    }
    bindings = [
        {
            "apiVersion": _RBAC_API,
            "kind": "ClusterRoleBinding",
            "metadata": {"name": name, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": group}],
        }
        for name, role, group in _BINDINGS
    ]
    return [token_secret, *bindings]
