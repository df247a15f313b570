"""The tenant-side RBAC Talos workers need to discover the apiserver endpoints, and no more."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest

from tenant_support import load_example
from tenantctl.render import render_tenant_bootstrap
from tenantctl.render.bootstrap import ENDPOINT_DISCOVERY
from tenantctl.spec import parse_observed, parse_tenant_documents

Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def _bootstrap(example: str, observed: str) -> list[dict[str, Any]]:
    tenant = parse_tenant_documents(load_example(example))
    (state,) = parse_observed(load_example(observed)).values()
    return render_tenant_bootstrap(tenant.clusters[0], state)


EXAMPLES = [("proxmox.yaml", "observed-proxmox.yaml"), ("kubevirt.yaml", "observed-kubevirt.yaml")]


@pytest.mark.parametrize(("example", "observed"), EXAMPLES)
def test_nodes_may_read_the_apiserver_endpoints_in_default(
    example: str, observed: str, assert_valid: Validator
) -> None:
    objects = _bootstrap(example, observed)
    role = next(o for o in objects if o["kind"] == "Role" and o["metadata"]["name"] == ENDPOINT_DISCOVERY)
    binding = next(o for o in objects if o["kind"] == "RoleBinding" and o["metadata"]["name"] == ENDPOINT_DISCOVERY)
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "default"
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["endpoints"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["get", "list", "watch"]},
    ]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ENDPOINT_DISCOVERY}
    assert binding["subjects"] == [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "system:nodes"}]
    assert_valid(objects)


def test_the_grant_is_least_privilege() -> None:
    """Read-only, one namespace: no ClusterRole, no write verb, no wildcard."""
    objects = _bootstrap(*EXAMPLES[0])
    assert not [o for o in objects if o["kind"] == "ClusterRole"]
    rules = [r for o in objects if o["kind"] == "Role" for r in o["rules"]]
    assert {v for r in rules for v in r["verbs"]} == {"get", "list", "watch"}
    assert "*" not in {x for r in rules for key in ("apiGroups", "resources", "verbs") for x in r[key]}


def test_cli_renders_it_with_the_bootstrap_objects() -> None:
    from typer.testing import CliRunner

    from tenant_support import EXAMPLES as DIR
    from tenantctl.cli import app

    result = CliRunner().invoke(
        app,
        ["render", "-f", str(DIR / "proxmox.yaml"), "--observed", str(DIR / "observed-proxmox.yaml"), "--in-tenant"],
    )
    assert result.exit_code == 0, result.stderr
    assert f"name: {ENDPOINT_DISCOVERY}" in result.stdout
    assert "kind: RoleBinding" in result.stdout
