"""trustd published through Kamaji's TenantControlPlane: applied once, kept by the provider, restored when removed."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest
from kube_emulator import KubeEmulator
from operator_support import (
    TCP,
    condition,
    eventually,
    kamaji,
    management,
    one_more_pass,
    provider_tenant_control_plane,
    running_operator,
    seed_control_plane,
    seed_documents,
    watched,
)

from tenant_support import load_example

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
PROXMOX = ("tenant-acme", "acme")
TRUSTD = {"name": "talos-trustd", "port": 50001, "targetPort": 50001, "protocol": "TCP"}
Validate = Callable[[Iterable[Mapping[str, Any]]], None]


def seeded(mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path, *, additional_ports: bool = True) -> list[Any]:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    kamaji(mgmt, shared / "crds", additional_ports=additional_ports)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    return docs


def talos_api(mgmt: KubeEmulator) -> Mapping[str, Any]:
    return condition(mgmt.get(TC, *PROXMOX), "TalosAPI")


def tcp_writes(mgmt: KubeEmulator, since: int = 0) -> list[tuple[str, str | None]]:
    return [(m, n) for m, p, _, n in mgmt.write_requests[since:] if p == "tenantcontrolplanes"]


def ports(mgmt: KubeEmulator) -> Any:
    live = mgmt.get(TCP, *PROXMOX) or {}
    return live["spec"]["controlPlane"]["service"].get("additionalPorts")


async def test_a_tenant_control_plane_that_appears_gets_the_port_once(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path, assert_valid: Validate
) -> None:
    docs = seeded(mgmt, tenant, shared)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: talos_api(mgmt).get("reason") == "WaitingForTenantControlPlane")
        assert condition(mgmt.get(TC, *PROXMOX), "Ready")["status"] == "True", "Ready does not wait for it"
        mgmt.put(TCP, provider_tenant_control_plane(docs))
        await watched(ctx, TCP, *PROXMOX, lambda held: held is not None)
        await one_more_pass(ctx, PROXMOX)
        await eventually(lambda: talos_api(mgmt).get("status") == "True")
        for _ in range(3):
            await one_more_pass(ctx, PROXMOX)
    assert tcp_writes(mgmt) == [("PATCH", "acme")], "applied once, then compared and left alone"
    assert ports(mgmt) == [TRUSTD]
    live = mgmt.get(TCP, *PROXMOX)
    assert live is not None and live["spec"]["controlPlane"]["service"]["serviceType"] == "LoadBalancer"
    assert_valid([live])
    assert talos_api(mgmt)["reason"] == "TrustdPublished"
    assert [e for e in mgmt.live("events") if e.get("reason") == "TrustdPublished"]


async def test_a_provider_update_carrying_the_field_is_left_alone(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path
) -> None:
    docs = seeded(mgmt, tenant, shared)
    mgmt.put(TCP, provider_tenant_control_plane(docs))
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: talos_api(mgmt).get("status") == "True")
        updated = copy.deepcopy(mgmt.get(TCP, *PROXMOX))
        assert updated is not None
        updated["spec"]["controlPlane"]["deployment"]["replicas"] = 3  # the provider's full update
        mgmt.put(TCP, updated)
        since = len(mgmt.write_requests)
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
    assert tcp_writes(mgmt, since) == []
    assert ports(mgmt) == [TRUSTD]


@pytest.mark.parametrize("left", [None, [{**TRUSTD, "targetPort": 50000}]], ids=["removed", "changed"])
async def test_a_removed_or_changed_field_is_applied_again(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path, left: list[dict[str, Any]] | None
) -> None:
    docs = seeded(mgmt, tenant, shared)
    mgmt.put(TCP, provider_tenant_control_plane(docs))
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: talos_api(mgmt).get("status") == "True")
        update = provider_tenant_control_plane(docs)  # a full update without our field, or with it edited
        if left is not None:
            update["spec"]["controlPlane"]["service"]["additionalPorts"] = left
        mgmt.put(TCP, update)
        assert ports(mgmt) == left
        since = len(mgmt.write_requests)
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
    assert tcp_writes(mgmt, since) == [("PATCH", "acme")]
    assert ports(mgmt) == [TRUSTD]


async def test_a_kamaji_without_the_field_is_a_condition_and_the_pass_otherwise_succeeds(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path
) -> None:
    docs = seeded(mgmt, tenant, shared, additional_ports=False)
    mgmt.put(TCP, provider_tenant_control_plane(docs))
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: talos_api(mgmt).get("reason") == "KamajiTooOld")
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
    cond = talos_api(mgmt)
    assert cond["status"] == "False" and "26.3.2-edge" in cond["message"]
    tc = mgmt.get(TC, *PROXMOX)
    assert condition(tc, "Ready")["status"] == "True" and condition(tc, "Applied")["status"] == "True"
    assert tcp_writes(mgmt) == []
    assert len([e for e in mgmt.live("events") if e.get("reason") == "KamajiTooOld"]) == 1


async def test_without_kamaji_the_condition_says_what_to_install(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    async with running_operator(mgmt):
        await eventually(lambda: talos_api(mgmt).get("reason") == "KamajiMissing")
    assert "26.3.2-edge" in talos_api(mgmt)["message"]


async def test_the_kamaji_crd_is_judged_once_per_resync_not_once_per_pass(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path
) -> None:
    """The verdict on the installed Kamaji is the operator's, shared by every pass and tenant (KamajiSchema):
    a pass that judged the 600 KiB CRD itself would read it on every wake-up."""
    seeded(mgmt, tenant, shared)
    crd = ("customresourcedefinitions", None, "tenantcontrolplanes.kamaji.clastix.io")
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: talos_api(mgmt).get("reason") is not None)
        first = mgmt.named_reads[crd]
        assert first == 1
        for _ in range(3):
            await one_more_pass(ctx, PROXMOX)
    assert mgmt.named_reads[crd] == first
