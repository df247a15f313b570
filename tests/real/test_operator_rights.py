"""The operator's rights on the real kube-apiserver, asked as its own ServiceAccount (issue 61).

What it may do is what docs/security.md's table says and no more (SelfSubjectRulesReview, per namespace: one
`install` opened, one it did not); the escalations its old ClusterRole allowed are refused, each next to the
same request made harmless, so a refusal is of that request and not of everything. Every request is a dry
run: a right that slipped back in changes nothing in the shared cluster while the test fails.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from real_control_plane import ControlPlane
from real_seed import OPERATOR_NAMESPACE, OPERATOR_SA, operator_connection
from tenantctl.operator.install.rights import cluster_rules, tenant_rules
from tenantctl.operator.kube.client import APIError, Connection, KubeClient
from tenantctl.render.addon_roles import KCCM_ROLE, KCSI_VOLUMES_ROLE

pytestmark = [pytest.mark.timeout(120)]

OPENED = "tenant-acme"  # opened by the `installed` fixture's `install --apply -f examples/proxmox.yaml`
Grant = tuple[str, str, str, str]


def expand(rules: Iterable[Mapping[str, Any]]) -> set[Grant]:
    """(group, resource, verb, name or '*') of every rule."""
    return {(g, r, v, n) for rule in rules for g in rule.get("apiGroups") or [""] for r in rule["resources"]
            for v in rule["verbs"] for n in (rule.get("resourceNames") or ["*"])}


async def _rules(connection: Connection, namespace: str) -> set[Grant]:
    async with KubeClient(connection) as api:
        review = await api.call("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
            "spec": {"namespace": namespace}})
    assert not review["status"].get("incomplete"), review["status"]
    return expand(review["status"]["resourceRules"])


def _tct_delete(namespace: str, names: Iterable[str]) -> set[Grant]:
    return {("bootstrap.cluster.x-k8s.io", "talosconfigtemplates", "delete", n) for n in names}


async def test_what_the_operator_may_do_is_the_rights_table(installed: Any, management: ControlPlane) -> None:
    everyone = await _rules(Connection.from_kubeconfig(management.kubeconfig_for("default", "default")), "kube-system")
    operator = operator_connection(management)
    closed = await _rules(operator, "kube-system") - everyone
    assert closed == expand(cluster_rules()), "outside an opened namespace: the cluster-wide table only"
    opened = await _rules(operator, OPENED) - everyone
    tct = {g for g in opened - expand(cluster_rules()) - expand(tenant_rules()) if g[1] == "talosconfigtemplates"}
    assert tct == _tct_delete(OPENED, ["acme-md0"]), "install -f's Role: each template by name"
    assert opened == expand(cluster_rules()) | expand(tenant_rules()) | tct


def _deployment(namespace: str, account: str) -> dict[str, Any]:
    labels = {"app": "escalate"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "escalate", "namespace": namespace},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "serviceAccountName": account, "containers": [{"name": "c", "image": "pause:3.10"}]}}}}


def _binding(kind: str, namespace: str | None, role: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "escalate", **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": OPERATOR_SA, "namespace": OPERATOR_NAMESPACE}]}


def _secret(namespace: str, kind: str) -> dict[str, Any]:
    annotations = {"kubernetes.io/service-account.name": "default"} if kind.endswith("token") else {}
    return {"apiVersion": "v1", "kind": "Secret", "type": kind,
            "metadata": {"name": "escalate", "namespace": namespace, "annotations": annotations}}


_DRY = "?dryRun=All"
# (what, method, path, body, refused): each refusal beside the same request where the operator may make it.
_REQUESTS: tuple[tuple[str, str, str, dict[str, Any] | None, bool], ...] = (
    ("a Deployment in kube-system naming another account", "POST",
     "/apis/apps/v1/namespaces/kube-system/deployments", _deployment("kube-system", "kube-proxy"), True),
    ("a Deployment in an opened namespace", "POST",
     f"/apis/apps/v1/namespaces/{OPENED}/deployments", _deployment(OPENED, "default"), False),
    ("a service-account-token Secret", "POST", f"/api/v1/namespaces/{OPENED}/secrets",
     _secret(OPENED, "kubernetes.io/service-account-token"), True),
    ("an Opaque Secret", "POST", f"/api/v1/namespaces/{OPENED}/secrets", _secret(OPENED, "Opaque"), False),
    ("a Secret in kube-system", "POST", "/api/v1/namespaces/kube-system/secrets", _secret("kube-system", "Opaque"),
     True),
    ("a ClusterRoleBinding of cluster-admin", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
     _binding("ClusterRoleBinding", None, "cluster-admin"), True),
    ("a ClusterRoleBinding of the add-on role it may bind but not cluster-wide", "POST",
     "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", _binding("ClusterRoleBinding", None, KCCM_ROLE), True),
    ("a ClusterRoleBinding of the CSI volumes role", "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
     _binding("ClusterRoleBinding", None, KCSI_VOLUMES_ROLE), False),
    ("a RoleBinding of cluster-admin in an opened namespace", "POST",
     f"/apis/rbac.authorization.k8s.io/v1/namespaces/{OPENED}/rolebindings",
     _binding("RoleBinding", OPENED, "cluster-admin"), True),
    ("a RoleBinding of its tenant role in kube-system", "POST",
     "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings",
     _binding("RoleBinding", "kube-system", "tenantctl-operator-tenant"), True),
    ("a RoleBinding of an add-on role in an opened namespace", "POST",
     f"/apis/rbac.authorization.k8s.io/v1/namespaces/{OPENED}/rolebindings",
     _binding("RoleBinding", OPENED, KCCM_ROLE), False),
    ("the deletion of a ClusterRole not a tenant's", "DELETE",
     "/apis/rbac.authorization.k8s.io/v1/clusterroles/view", None, True),
    ("the deletion of the cluster-admin ClusterRoleBinding", "DELETE",
     "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/cluster-admin", None, True),
    ("a ServiceAccount in kube-system", "POST", "/api/v1/namespaces/kube-system/serviceaccounts",
     {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "escalate"}}, True),
)


@pytest.mark.parametrize(("what", "method", "path", "body", "refused"), _REQUESTS, ids=[r[0] for r in _REQUESTS])
async def test_an_escalation_is_refused_and_its_harmless_twin_allowed(
    installed: Any, management: ControlPlane, what: str, method: str, path: str, body: dict[str, Any] | None,
    refused: bool,
) -> None:
    async with KubeClient(operator_connection(management)) as api:
        try:
            await api.call(method, path + _DRY, body)
        except APIError as exc:
            assert refused, f"{what}: refused ({exc})"
            assert exc.status == 403, f"{what}: {exc}"
            return
    assert not refused, f"{what}: allowed"
