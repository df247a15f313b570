"""How the operator sets kopf and its process up: no diff base (no handler needs one), so kopf writes
nothing but its finalizers, and a garbage collector tuned for passes that allocate much and keep little."""

from __future__ import annotations

import asyncio
import gc

import pytest
from kube_emulator import KubeEmulator
from operator_support import condition, eventually, management, running_operator, seed_control_plane, seed_documents

from tenant_support import load_example
from tenantctl.collector import GC_THRESHOLDS
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.handlers import OperatorContext, build_registry

pytestmark = [pytest.mark.timeout(15)]

TC = "tenantctl.io/v1alpha1/tenantclusters"
KEY = ("tenant-acme", "acme")


def test_handlers_need_no_diff_base() -> None:
    """`NoDiffBase` keeps no last-handled state: a creation, update or resume handler would never fire."""
    registry = build_registry(OperatorContext(Connection.from_server("http://127.0.0.1:1")))
    reasons = {str(h.reason) for h in registry._changing.get_all_handlers()}
    assert reasons == {"delete"}, "register creation/update handlers only with kopf's diff-base storage back"


@pytest.mark.looptime
async def test_kopf_writes_only_its_finalizers(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    gc.set_threshold(700, 10, 10)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *KEY), "Ready").get("status") == "True")
        await asyncio.sleep(5)
        assert gc.get_threshold() == GC_THRESHOLDS
    patched = [(plural, name) for verb, plural, _, name in mgmt.write_requests if verb == "PATCH"]
    assert sorted(p for p in patched if p[0] in ("tenantclusters", "nodepools")) == [
        ("nodepools", "md0"), ("nodepools", "md0"), ("tenantclusters", "acme"), ("tenantclusters", "acme")
    ], "a finalizer and a status each, no diff-base annotation"
    for plural, name in (("tenantclusters", "acme"), ("nodepools", "md0")):
        live = mgmt.get(f"tenantctl.io/v1alpha1/{plural}", "tenant-acme", name) or {}
        assert not (live["metadata"].get("annotations") or {}), "no copy of the spec in an annotation"
