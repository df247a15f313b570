"""Who the operator is in the management cluster, and the names of the rights `install` gives it.

Shared by `install` (which renders the ServiceAccount, ClusterRoles and admission policy) and the
reconcile (which binds the per-namespace role in each namespace that holds a tenant).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["OPERATOR", "OPERATOR_LABELS", "TENANT_ROLE", "Subject"]

OPERATOR = "tenantctl-operator"
"""The operator's ServiceAccount, ClusterRole, and the RoleBinding it keeps in each tenant namespace."""
OPERATOR_LABELS = {"app.kubernetes.io/name": OPERATOR, "app.kubernetes.io/managed-by": "tenantctl"}
"""On everything `install` renders for the operator, and what selects its workloads."""
TENANT_ROLE = "tenantctl-operator-tenant"
"""The ClusterRole of the operator's writes, bound only in namespaces that hold a TenantCluster."""
_SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class Subject:
    """An RBAC subject: what the API server says the operator authenticated as (SelfSubjectReview)."""

    kind: str
    name: str
    namespace: str | None = None

    @classmethod
    def of_username(cls, username: str) -> Subject:
        """`system:serviceaccount:<ns>:<name>` is a ServiceAccount; any other name a User (a developer's
        operator run with their own kubeconfig)."""
        if username.startswith(_SERVICE_ACCOUNT_PREFIX):
            namespace, _, name = username.removeprefix(_SERVICE_ACCOUNT_PREFIX).partition(":")
            if namespace and name:
                return cls("ServiceAccount", name, namespace)
        return cls("User", username)

    def as_rbac(self) -> dict[str, str]:
        if self.kind == "ServiceAccount":
            return {"kind": "ServiceAccount", "name": self.name, "namespace": self.namespace or ""}
        return {"kind": self.kind, "apiGroup": "rbac.authorization.k8s.io", "name": self.name}
