"""The operator can create every RBAC object it renders: Kubernetes lets a subject grant only what it holds
or a role it may `bind`. A rendered Role's rules are within what the operator holds in the tenant's
namespace (its cluster-wide reads and its tenant role); a rendered binding names a role it may bind."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.operator.install.rights import CLUSTER_RIGHTS, cluster_rules, tenant_rules
from tenantctl.render import render_tenant
from tenantctl.render.addon_roles import ADDON_ROLES, KCSI_VOLUMES_ROLE
from tenantctl.spec import parse_tenant_documents


def autoscaled(example: str) -> list[dict[str, Any]]:
    docs = load_example(example)
    for pool in (d for d in docs if d["kind"] == "NodePool"):
        pool["spec"].pop("replicas", None)
        pool["spec"].update(minReplicas=0, maxReplicas=2)
    return docs


def grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


def _bindable() -> set[str]:
    return {n for right in CLUSTER_RIGHTS if "bind" in right.verbs for n in right.names}


@pytest.mark.parametrize("example", ["kubevirt.yaml", "proxmox.yaml"])
def test_every_rendered_role_is_within_what_the_operator_holds_in_the_namespace(example: str) -> None:
    objects = render_tenant(parse_tenant_documents(autoscaled(example)))
    roles = [o for o in objects if o["kind"] in ("Role", "ClusterRole") and "namespace" in o["metadata"]]
    held = grants(cluster_rules()) | grants(tenant_rules())
    for role in roles:
        missing = grants(role["rules"]) - held
        assert not missing, f"{role['metadata']['name']}: the operator cannot grant {sorted(missing)}"


@pytest.mark.parametrize("example", ["kubevirt.yaml", "proxmox.yaml"])
def test_every_rendered_binding_of_a_cluster_role_names_one_the_operator_may_bind(example: str) -> None:
    objects = render_tenant(parse_tenant_documents(autoscaled(example)))
    management = [o for o in objects if o["kind"] in ("RoleBinding", "ClusterRoleBinding")
                  and o["roleRef"]["kind"] == "ClusterRole"
                  and o["metadata"].get("labels", {}).get("tenantctl.io/cluster")]
    assert any("autoscaler" in o["metadata"]["name"] for o in management)
    for binding in management:
        assert binding["roleRef"]["name"] in _bindable(), binding["metadata"]["name"]
    cluster_wide = [o["roleRef"]["name"] for o in management if o["kind"] == "ClusterRoleBinding"]
    assert set(cluster_wide) <= {KCSI_VOLUMES_ROLE}


def test_the_operator_holds_none_of_the_add_ons_own_writes() -> None:
    """Bind by name, not by holding: what only an add-on does (issue 61's list) is none of the operator's."""
    held = grants(cluster_rules()) | grants(tenant_rules())
    add_ons = {g for rules in ADDON_ROLES.values() for g in grants(
        [{"apiGroups": [grp], "resources": list(res), "verbs": list(verbs)} for grp, res, verbs in rules])}
    only_add_ons = {
        ("discovery.k8s.io", "endpointslices", "create"), ("", "services", "update"),
        ("", "persistentvolumeclaims", "patch"), ("kubevirt.io", "virtualmachineinstances", "update"),
        ("subresources.kubevirt.io", "virtualmachines/addvolume", "update"), ("cluster.x-k8s.io", "machines", "update"),
        ("cluster.x-k8s.io", "machinedeployments/scale", "update"), ("cdi.kubevirt.io", "datavolumes", "create"),
    }
    assert only_add_ons <= add_ons
    assert not only_add_ons & held, sorted(only_add_ons & held)
