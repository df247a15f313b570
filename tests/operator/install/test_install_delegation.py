"""The operator can create every Role it renders: Kubernetes lets a subject grant only what it holds."""

from __future__ import annotations

from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.operator.install.objects import operator_rules
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents


def autoscaled(example: str) -> list[dict[str, Any]]:
    docs = load_example(example)
    for pool in (d for d in docs if d["kind"] == "NodePool"):
        pool["spec"].pop("replicas", None)
        pool["spec"].update(minReplicas=0, maxReplicas=2)
    return docs


def grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(g, r, v) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}


@pytest.mark.parametrize("example", ["kubevirt.yaml", "proxmox.yaml"])
def test_every_rendered_role_is_within_the_operators_own_rules(example: str) -> None:
    objects = render_tenant(parse_tenant_documents(autoscaled(example)))
    roles = [o for o in objects if o["kind"] in ("Role", "ClusterRole")]
    assert any("autoscaler" in r["metadata"]["name"] for r in roles)
    held = grants(operator_rules())
    for role in roles:
        missing = grants(role["rules"]) - held
        assert not missing, f"{role['metadata']['name']}: the operator cannot grant {sorted(missing)}"
