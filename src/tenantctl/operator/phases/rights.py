"""Whether the operator may write in a tenant's namespace: the RoleBinding of its tenant role there.

`install` gives the operator reads cluster-wide but its writes only as a ClusterRole
(`tenantctl-operator-tenant`) that `install` binds in each namespace a platform admin opens to tenants;
the operator cannot bind it itself, so a compromised operator cannot reach a namespace nobody opened.
A tenant in a namespace not opened is told so, in its conditions, before any write is refused.
"""

from __future__ import annotations

from typing import Any

from tenantctl.operator.config.identity import OPERATOR, OPERATOR_LABELS, TENANT_ROLE, Subject
from tenantctl.operator.kube.client import KubeClient

__all__ = ["RBAC", "closed_namespace", "rights_binding"]

RBAC = "rbac.authorization.k8s.io"


def rights_binding(namespace: str, subject: Subject) -> dict[str, Any]:
    """The RoleBinding `install` renders to open `namespace` to the operator."""
    return {
        "apiVersion": f"{RBAC}/v1",
        "kind": "RoleBinding",
        "metadata": {"name": OPERATOR, "namespace": namespace, "labels": dict(OPERATOR_LABELS)},
        "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": TENANT_ROLE},
        "subjects": [subject.as_rbac()],
    }


async def closed_namespace(api: KubeClient, namespace: str, subject: Subject) -> str | None:
    """Why the operator may not write in `namespace` (None: the tenant role is bound there to it)."""
    res = await api.require(f"{RBAC}/v1", "RoleBinding")
    live = await api.get(res, OPERATOR, namespace)
    wanted = rights_binding(namespace, subject)
    if live is not None and live.get("roleRef") == wanted["roleRef"] and wanted["subjects"][0] in (
        live.get("subjects") or []
    ):
        return None
    return (f"namespace {namespace} is not open to the operator (no RoleBinding {OPERATOR} of {TENANT_ROLE} to "
            f"{subject.name}): a platform admin opens it with `tenantctl install --apply --tenant-namespace "
            f"{namespace}`")
