"""The privilege tables are data: the docs are generated from them, and a spec maps them onto paths."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import tenantctl.proxmox.privileges as privileges
from tenantctl.proxmox.privileges import (
    PRIVILEGE_TABLES,
    Controller,
    Scope,
    StandFacts,
    render_privileges_markdown,
    requirements_for,
)

DOC = Path(__file__).resolve().parents[2] / "docs" / "proxmox-privileges.md"


def test_docs_file_is_the_generated_text() -> None:
    assert DOC.read_text(encoding="utf-8") == render_privileges_markdown(), (
        "regenerate: python -c 'from tenantctl.proxmox.privileges import render_privileges_markdown as r; "
        "open(\"docs/proxmox-privileges.md\", \"w\").write(r())'"
    )


def test_public_names_are_stable() -> None:
    assert set(privileges.__all__) >= {
        "PRIVILEGE_TABLES", "Controller", "Grant", "Requirement", "Scope", "StandFacts",
        "render_privileges_markdown", "requirements_for",
    }


def test_tables_hold_what_each_controller_documents() -> None:
    def privs(c: Controller) -> set[str]:
        return {p for g in PRIVILEGE_TABLES[c] for p in g.privileges}

    assert privs(Controller.CSI) == {
        "VM.Audit", "VM.Config.Disk", "Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.Audit"}
    assert privs(Controller.CCM) == {"VM.Audit", "VM.GuestAgent.Audit", "Sys.Audit"}
    capmox = {g.scope: set(g.privileges) for g in PRIVILEGE_TABLES[Controller.CAPMOX]}
    assert capmox[Scope.ROOT] == capmox[Scope.NODES] == {"Sys.Audit"}
    assert capmox[Scope.TEMPLATE] == {"VM.Audit", "VM.Clone"}
    assert {"VM.Allocate", "VM.Clone", "VM.Config.Disk", "VM.PowerMgmt"} <= capmox[Scope.TENANT_VMS]
    assert "Datastore.AllocateSpace" in capmox[Scope.CLONE_STORAGE]


def test_markdown_names_the_pool_scope_and_what_it_leaves_open() -> None:
    text = render_privileges_markdown()
    for needle in ("## Proxmox token privileges", "/pool/<pool>", "The tenant's own disks",
                   "A storage shared with others", "| `/storage/<storage>` |"):
        assert needle in text


def test_paths_follow_the_spec(tenant_spec: Callable[..., Any]) -> None:
    tenant = tenant_spec()
    tc = tenant.clusters[0]
    facts = StandFacts(template_ids={"md0": (9000,)}, template_storages={"md0": ("ceph-vm",)},
                       iso_storages={"pve1": ("local",), "pve2": ("local",)})
    reqs = requirements_for(tc, tenant.pools_of(tc), facts=facts)
    paths = {(r.controller, r.path) for r in reqs}
    assert (Controller.CAPMOX, "/pool/tenant-acme") in paths
    assert (Controller.CAPMOX, "/vms/9000") in paths
    assert (Controller.CAPMOX, "/storage/ceph-vm") in paths
    assert (Controller.CAPMOX, "/nodes/pve2") in paths
    assert (Controller.CAPMOX, "/sdn/zones/localnetwork/vmbr0") in paths
    assert (Controller.CSI, "/storage/tenant-zfs") in paths
    assert (Controller.CCM, "/pool/tenant-acme") in paths


def test_no_pool_means_vms_and_full_clone_means_its_storage(tenant_spec: Callable[..., Any]) -> None:
    def mutate(c: dict[str, Any], p: dict[str, Any]) -> None:
        p["spec"]["proxmox"].pop("pool")
        p["spec"]["proxmox"].update(full=True, storage="nvme", network={"bridge": "vmbr1", "vlan": 42})

    tenant = tenant_spec(mutate)
    tc = tenant.clusters[0]
    paths = {r.path for r in requirements_for(tc, tenant.pools_of(tc), [Controller.CAPMOX])}
    assert {"/vms", "/storage/nvme", "/sdn/zones/localnetwork/vmbr1/42"} <= paths
    assert "/pool/tenant-acme" not in paths


def test_csi_disabled_requires_nothing_of_csi(tenant_spec: Callable[..., Any]) -> None:
    tenant = tenant_spec(lambda c, p: c["spec"]["proxmox"].update(csi={"enabled": False}))
    tc = tenant.clusters[0]
    assert [r for r in requirements_for(tc, tenant.pools_of(tc)) if r.controller is Controller.CSI] == []


def test_doctor_doc_names_every_check() -> None:
    from tenantctl.proxmox.checks import CHECKS

    text = (DOC.parent / "doctor.md").read_text(encoding="utf-8")
    assert [c.name for c in CHECKS if f"| `{c.name}` |" not in text] == []
