"""What stops the operator's ServiceAccount from doing what its RBAC cannot forbid.

RBAC gives the operator its writes only in namespaces a platform admin opened (`install` binds the tenant
role there), and `bind` only of named roles. What RBAC cannot say is said by three
ValidatingAdmissionPolicies (`admissionregistration.k8s.io/v1`, Kubernetes 1.30+), matched on the
operator's username only (`matchConditions`), so no other client is judged:

- `tenantctl-operator-secrets`: it never creates or changes a `service-account-token` Secret (which
  would hand it a token of any ServiceAccount of a tenant namespace).
- `tenantctl-operator-cluster-bindings`: a ClusterRoleBinding it creates, changes or deletes binds the
  KubeVirt CSI volumes role and nothing else (a ClusterRoleBinding's name cannot be scoped in RBAC for
  create), but for deleting a tenant's own of an earlier release.
- `tenantctl-operator-cluster-roles`: a ClusterRole it deletes is a tenant's own of an earlier release
  (releases before the shared add-on roles rendered one per KubeVirt tenant); it creates none.

"A tenant's own" is told by the labels every rendered object carries: managed by tenantctl, with the
cluster label (`render/meta.object_meta`); the operator cannot create a ClusterRole to forge one.

Why not "only where a TenantCluster is" as a policy with the TenantCluster as its `paramKind`: the API
server looks the parameter up before it evaluates `matchConditions`, so with `parameterNotFoundAction:
Deny` the policy refused every client's writes in a namespace without a tenant (measured on
kube-apiserver v1.34: the admin's own `install` of the metrics Service). The namespaces are the
admin's choice instead, made once per namespace.
"""

from __future__ import annotations

from typing import Any

from tenantctl.operator.config.identity import OPERATOR
from tenantctl.render.addon_roles import KCSI_VOLUMES_ROLE
from tenantctl.render.meta import CLUSTER_LABEL, MANAGED_BY

__all__ = ["BINDINGS_POLICY", "ROLES_POLICY", "SECRETS_POLICY", "admission_policies"]

SECRETS_POLICY = f"{OPERATOR}-secrets"
BINDINGS_POLICY = f"{OPERATOR}-cluster-bindings"
ROLES_POLICY = f"{OPERATOR}-cluster-roles"
_API = "admissionregistration.k8s.io/v1"
_WRITES = ["CREATE", "UPDATE", "DELETE"]
_TOKEN = "kubernetes.io/service-account-token"
_MANAGED = "app.kubernetes.io/managed-by"
_TENANTS_OWN = (f"has(oldObject.metadata.labels) && '{_MANAGED}' in oldObject.metadata.labels && "
                f"oldObject.metadata.labels['{_MANAGED}'] == '{MANAGED_BY}' && "
                f"'{CLUSTER_LABEL}' in oldObject.metadata.labels")
"""A tenant's own object, rendered by tenantctl: what an earlier release's prune may delete."""


def _is_operator(namespace: str) -> list[dict[str, str]]:
    username = f"system:serviceaccount:{namespace}:{OPERATOR}"
    return [{"name": "is-the-operator", "expression": f"request.userInfo.username == '{username}'"}]


def _policy(name: str, rule: dict[str, Any], validation: dict[str, str], namespace: str,
            labels: dict[str, str]) -> list[dict[str, Any]]:
    """A policy on the operator's requests of one rule, and its binding (after it, in apply order)."""
    policy = {
        "apiVersion": _API, "kind": "ValidatingAdmissionPolicy", "metadata": {"name": name, "labels": dict(labels)},
        "spec": {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": [rule]},
                 "matchConditions": _is_operator(namespace), "validations": [{**validation, "reason": "Forbidden"}]},
    }
    binding = {
        "apiVersion": _API, "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": {"policyName": name, "validationActions": ["Deny"]},
    }
    return [policy, binding]


def admission_policies(namespace: str, labels: dict[str, str]) -> list[dict[str, Any]]:
    """Each policy and its binding, in apply order."""
    secrets = {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"], "resources": ["secrets"]}
    bindings = {"apiGroups": ["rbac.authorization.k8s.io"], "apiVersions": ["*"], "operations": _WRITES,
                "resources": ["clusterrolebindings"]}
    roles = {**bindings, "resources": ["clusterroles"]}
    return [
        *_policy(SECRETS_POLICY, secrets, {
            "expression": f"!has(object.type) || object.type != '{_TOKEN}'",
            "message": "the operator never writes a service-account-token Secret",
        }, namespace, labels),
        *_policy(BINDINGS_POLICY, bindings, {
            "expression": f"request.operation == 'DELETE' ? (oldObject.roleRef.name == '{KCSI_VOLUMES_ROLE}' || "
                          f"{_TENANTS_OWN}) : object.roleRef.name == '{KCSI_VOLUMES_ROLE}'",
            "message": f"the operator binds no ClusterRole cluster-wide but {KCSI_VOLUMES_ROLE}",
        }, namespace, labels),
        *_policy(ROLES_POLICY, roles, {
            "expression": f"request.operation == 'DELETE' && {_TENANTS_OWN}",
            "message": "the operator writes no ClusterRole; it deletes only a tenant's own of an earlier release",
        }, namespace, labels),
    ]
