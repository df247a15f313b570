"""A tenant in a namespace nobody opened to the operator: told how to open it, nothing written, and taken up
as soon as `install` binds the tenant role there (issue 61: the operator cannot open a namespace itself)."""

from __future__ import annotations

import pytest
from kube_emulator import KubeEmulator
from operator_support import (
    condition,
    eventually,
    management,
    open_namespace,
    running_operator,
    seed_control_plane,
    seed_documents,
)

from tenant_support import load_example
from tenantctl.operator.config.identity import OPERATOR, TENANT_ROLE

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
PROXMOX = ("tenant-acme", "acme")
BINDINGS = "rbac.authorization.k8s.io/v1/rolebindings"


def _ready(mgmt: KubeEmulator) -> dict[str, str]:
    return dict(condition(mgmt.get(TC, *PROXMOX), "Ready"))


async def test_a_closed_namespace_stops_the_pass_before_any_write_and_says_how_to_open_it(
    mgmt: KubeEmulator, tenant: KubeEmulator,
) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs, opened=False)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt).get("reason") == "NamespaceClosed")
        message = _ready(mgmt)["message"]
        assert "tenantctl install --apply --tenant-namespace tenant-acme" in message and TENANT_ROLE in message
        written = [w for w in mgmt.writes() if w.plural not in ("events", "tenantclusters", "nodepools")]
        assert written == [], "nothing of the tenant, and no RoleBinding of its own"
        open_namespace(mgmt, "tenant-acme")
        await eventually(lambda: _ready(mgmt).get("status") == "True")


async def test_a_binding_of_another_account_does_not_open_it(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs, opened=False)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    other = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": OPERATOR, "namespace": "tenant-acme"},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": TENANT_ROLE},
             "subjects": [{"kind": "ServiceAccount", "name": OPERATOR, "namespace": "elsewhere"}]}
    mgmt.put(BINDINGS, other)
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt).get("reason") == "NamespaceClosed")
