"""Objects applied *inside* a tenant through its admin kubeconfig once the apiserver answers:
the bootstrap token Talos workers join with, the RBAC that lets them, and the read access their
apiserver-endpoint discovery needs."""

from __future__ import annotations

from typing import Any

from tenantctl.render.meta import cluster_labels
from tenantctl.render.plain import plain_copy
from tenantctl.spec import ObservedState, TenantCluster

__all__ = ["BOOTSTRAPPERS_GROUP", "ENDPOINT_DISCOVERY", "render_tenant_bootstrap_objects"]

BOOTSTRAPPERS_GROUP = "system:bootstrappers:talos"
_NODES_GROUP = "system:nodes"
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
        _NODES_GROUP,
    ),
)


ENDPOINT_DISCOVERY = "tenantctl:talos-node-apiserver-endpoint-discovery"
# Talos workers' k8s.EndpointController reads the apiserver endpoints in `default` with the node's credentials;
# without this they log forbidden errors (Cozystack, templates/talos/bootstrap-token-tenant-job.yaml).
# A Role in `default` only, read-only: that namespace holds the one built-in `kubernetes` endpoint. No
# resourceNames: Kubernetes honours them on list/watch only with a name field selector.
_ENDPOINT_DISCOVERY_RULES: tuple[dict[str, Any], ...] = (
    {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get", "list", "watch"]},
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
)


def _group(name: str) -> dict[str, str]:
    return {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": name}


def _endpoint_discovery_rbac(labels: dict[str, str]) -> list[dict[str, Any]]:
    def meta() -> dict[str, Any]:
        return {"name": ENDPOINT_DISCOVERY, "namespace": "default", "labels": dict(labels)}

    role = {
        "apiVersion": _RBAC_API,
        "kind": "Role",
        "metadata": meta(),
        "rules": plain_copy(list(_ENDPOINT_DISCOVERY_RULES)),
    }
    binding = {
        "apiVersion": _RBAC_API,
        "kind": "RoleBinding",
        "metadata": meta(),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ENDPOINT_DISCOVERY},
        "subjects": [_group(_NODES_GROUP)],
    }
    return [role, binding]


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
            "subjects": [_group(group)],
        }
        for name, role, group in _BINDINGS
    ]
    return [token_secret, *bindings, *_endpoint_discovery_rbac(labels)]
