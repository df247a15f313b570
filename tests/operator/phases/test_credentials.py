"""The capmox Secret of a proxmox tenant, held to its spec by the operator (keys only, never values)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from kube_emulator import KubeEmulator
from operator_support import (
    CAPMOX_TOKEN_SECRET,
    capmox_credentials,
    condition,
    eventually,
    management,
    running_operator,
    seed_control_plane,
    seed_documents,
)

from tenant_support import doc, load_example

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
PROXMOX = ("tenant-acme", "acme")


def seeded(mgmt: KubeEmulator, tenant: KubeEmulator, *, insecure: bool = False) -> list[dict[str, Any]]:
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"]["insecure"] = insecure
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    return docs


def ready(mgmt: KubeEmulator) -> dict[str, Any]:
    return dict(condition(mgmt.get(TC, *PROXMOX), "Ready"))


@pytest.mark.parametrize(
    ("key", "reason"),
    [("insecure", "MissingInsecureKey"), ("url", "MissingURLKey"), ("token", "MissingTokenKey"),
     ("secret", "MissingSecretKey")],
)
async def test_a_missing_key_is_ready_false_with_a_reason_naming_it(
    mgmt: KubeEmulator, tenant: KubeEmulator, key: str, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    docs = seeded(mgmt, tenant)
    mgmt.put("v1/secrets", capmox_credentials(docs, **{key: None}))
    caplog.set_level(logging.DEBUG)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt).get("reason") == reason)
    cond = ready(mgmt)
    assert cond["status"] == "False" and f"key {key}" in cond["message"]
    assert "Secret tenant-acme/capmox-acme" in cond["message"]
    creds = condition(mgmt.get(TC, *PROXMOX), "CredentialsReady")
    assert (creds["status"], creds["reason"]) == ("False", reason)
    assert condition(mgmt.get(TC, *PROXMOX), "Applied")["status"] == "True", "the pass otherwise succeeds"
    warnings = [e for e in mgmt.live("events") if e.get("reason") == reason]
    assert len(warnings) == 1
    everything = caplog.text + str(mgmt.live("events")) + str(mgmt.get(TC, *PROXMOX))
    assert CAPMOX_TOKEN_SECRET not in everything and "capmox@pve!capi" not in everything


async def test_missing_insecure_is_fine_when_the_spec_accepts_insecure(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    docs = seeded(mgmt, tenant, insecure=True)
    mgmt.put("v1/secrets", capmox_credentials(docs, insecure=None))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt).get("status") == "True")
    creds = condition(mgmt.get(TC, *PROXMOX), "CredentialsReady")
    assert (creds["status"], creds["reason"]) == ("True", "CredentialsChecked")


async def test_an_absent_secret_says_how_to_create_it(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    mgmt.objects["v1/secrets", "tenant-acme", "capmox-acme"].delete()
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt).get("reason") == "CredentialsNotFound")
    assert "tenantctl secret proxmox-cluster" in ready(mgmt)["message"]


async def test_a_fixed_secret_makes_the_tenant_ready(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = seeded(mgmt, tenant)
    mgmt.put("v1/secrets", capmox_credentials(docs, insecure=None))
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt).get("reason") == "MissingInsecureKey")
        mgmt.put("v1/secrets", capmox_credentials(docs))
        before = ctx.passes[PROXMOX]
        ctx.wakeup(PROXMOX).set()
        await eventually(lambda: ctx.passes[PROXMOX] > before)
        await eventually(lambda: ready(mgmt).get("status") == "True")


async def test_kubevirt_tenants_have_no_credentials_condition(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = load_example("kubevirt.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, "tenant-demo", "demo"), "Ready").get("status") == "True")
    assert condition(mgmt.get(TC, "tenant-demo", "demo"), "CredentialsReady") == {}


async def test_a_finding_whose_message_changes_under_the_same_reason_is_told_again(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """The reason names the first finding only; a second problem in the Secret is news all the same."""
    docs = seeded(mgmt, tenant)
    mgmt.put("v1/secrets", capmox_credentials(docs, url=None))
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt).get("reason") == "MissingURLKey")
        first = ready(mgmt)["message"]
        mgmt.put("v1/secrets", capmox_credentials(docs, url=None, insecure=None))
        ctx.wakeup(PROXMOX).set()
        await eventually(lambda: ready(mgmt)["message"] != first)
        assert ready(mgmt)["reason"] == "MissingURLKey"
        await eventually(lambda: len([e for e in mgmt.live("events") if e.get("reason") == "MissingURLKey"]) == 2)
    warned = sorted(e["message"] for e in mgmt.live("events") if e.get("reason") == "MissingURLKey")
    assert warned == sorted([first, ready(mgmt)["message"]])
