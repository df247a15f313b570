"""A restore from another namespace's tenant only with the Platform's leave (issue 61): that backup is the
other tenant's data, and with `replace` its identity."""

from __future__ import annotations

from typing import Any

import pytest
from kube_emulator import KubeEmulator
from operator_support import condition, eventually, management, running_operator, seed_documents

from tenant_support import clone, load_example
from tenantctl.operator.phases.platform import platform_settings

pytestmark = [pytest.mark.timeout(30), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
PLATFORMS = "tenantctl.io/v1alpha1/platforms"


def _restored(source_namespace: str | None) -> list[dict[str, Any]]:
    docs = clone(load_example("kubevirt.yaml"))
    cluster = docs[0]
    cluster["metadata"]["name"] = "again"
    cluster["spec"]["backup"] = {
        "s3": {"endpoint": "https://s3.example.com", "bucket": "tenant-backups", "credentialsSecretName": "s3"},
        "encryption": {"keySecretName": "key"}}
    source = {"name": "demo", **({"namespace": source_namespace} if source_namespace else {})}
    cluster["spec"]["restore"] = {"from": source, "mode": "clone"}
    for pool in docs[1:]:
        pool["spec"]["cluster"] = "again"
    return docs


def _ready(mgmt: KubeEmulator) -> dict[str, str]:
    return dict(condition(mgmt.get(TC, "tenant-demo", "again"), "Ready"))


async def test_a_backup_of_another_namespace_is_refused_without_the_platforms_leave(mgmt: KubeEmulator) -> None:
    management(mgmt)
    seed_documents(mgmt, _restored("tenant-other"))
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt).get("reason") == "InvalidSpec")
    message = _ready(mgmt)["message"]
    assert message.startswith("TenantCluster/again.spec.restore.from.namespace: 'tenant-other' is another namespace")
    assert "spec.restore.acrossNamespaces: true" in message


@pytest.mark.parametrize("source", [None, "tenant-demo"])
async def test_a_backup_of_its_own_namespace_needs_no_leave(mgmt: KubeEmulator, source: str | None) -> None:
    management(mgmt)
    seed_documents(mgmt, _restored(source))
    async with running_operator(mgmt):
        await eventually(lambda: bool(_ready(mgmt)))
    assert "acrossNamespaces" not in _ready(mgmt).get("message", "")


async def test_with_the_platforms_leave_it_goes_on(mgmt: KubeEmulator) -> None:
    management(mgmt)
    mgmt.put(PLATFORMS, {"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "default"},
                         "spec": {"restore": {"acrossNamespaces": True}}})
    seed_documents(mgmt, _restored("tenant-other"))
    async with running_operator(mgmt):
        await eventually(lambda: bool(_ready(mgmt)))
    assert "acrossNamespaces" not in _ready(mgmt).get("message", "")


def test_the_leave_is_a_boolean_the_platform_types() -> None:
    """`"yes"` is no boolean: the Platform is refused rather than read as a leave."""
    base = {"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "default"}}
    assert platform_settings({**base, "spec": {"restore": {"acrossNamespaces": True}}}).restore_across_namespaces
    refused = platform_settings({**base, "spec": {"restore": {"acrossNamespaces": "yes"}}})
    assert refused.refusal is not None and "acrossNamespaces" in refused.refusal
    assert not platform_settings({**base, "spec": {}}).restore_across_namespaces
