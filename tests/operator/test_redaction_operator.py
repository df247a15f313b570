"""A refused spec that quotes a credential: the Ready condition, the Warning Event and the log mask it."""

from __future__ import annotations

import logging

import pytest
from kube_emulator import KubeEmulator
from operator_support import condition, eventually, management, running_operator, seed_control_plane, seed_documents

from tenant_support import doc, load_example

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"


async def test_a_credential_in_a_refused_value_reaches_no_condition_event_or_log(
    mgmt: KubeEmulator, tenant: KubeEmulator, caplog: pytest.LogCaptureFixture,
) -> None:
    valid, docs = load_example("kubevirt.yaml"), load_example("kubevirt.yaml")
    doc(docs, "TenantCluster")["spec"]["backup"] = {
        "schedule": "@daily", "s3": {"endpoint": "https://AKIAX:hunter2@s3.example.com", "bucket": "backups",
                                     "credentialsSecretName": "s3"}, "encryption": {"keySecretName": "k"}}
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, valid, str(tenant.url).rstrip("/"))
    with caplog.at_level(logging.INFO):
        async with running_operator(mgmt):
            await eventually(lambda: condition(mgmt.get(TC, "tenant-demo", "demo"), "Ready").get("reason")
                             == "InvalidSpec")
            await eventually(lambda: any(e.get("reason") == "InvalidSpec" for e in mgmt.live("events")))
    ready = condition(mgmt.get(TC, "tenant-demo", "demo"), "Ready")
    assert "***@s3.example.com" in ready["message"] and "hunter2" not in ready["message"]
    said = [e["message"] for e in mgmt.live("events")]
    assert said and not any("hunter2" in m for m in said)
    assert "hunter2" not in caplog.text
