"""What the doctor says when it cannot see part of the stand, and the rows only an unusual stand reaches.

A doctor that cannot read something must say so (WARN, naming the read), never PASS blind; each test
breaks one read or builds one unusual stand, and the whole report is pinned by `run_doctor`'s snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from fakepve import FakePve  # type: ignore[import-untyped]

from tenantctl.problems import InvalidInput
from tenantctl.proxmox.doctor import pick_cluster
from tenantctl.proxmox.report import Report, Row, Status
from tenantctl.spec import parse_tenant_documents

RunDoctor = Callable[..., Report]
TEMPLATE = 9000
TOKEN = "capmox@pve!capi"


def only(rows: list[Row], status: Status | None = None) -> Row:
    picked = [r for r in rows if status is None or r.status is status]
    assert len(picked) == 1, rows
    return picked[0]


def test_unreadable_permissions_leave_privileges_to_a_hand_check(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.fail("GET", "/access/permissions", 500, "permission cache broken")
    row = only(run_doctor().of("privileges"))
    assert (row.status, row.subject) == (Status.WARN, TOKEN)
    assert row.seen.startswith("could not read /access/permissions: ") and "permission cache broken" in row.seen
    assert row.advice == "compare the token's roles with docs/proxmox-privileges.md by hand"


def test_unreadable_pools_are_named_not_taken_for_a_missing_pool(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.fail("GET", "/pools", 500, "pool list broken")
    rows = run_doctor().of("pool")
    assert any(r.status is Status.WARN and r.seen.startswith("could not read pools: ") for r in rows), rows


def test_guest_agents_that_cannot_be_asked_are_listed_in_order(stand: FakePve, run_doctor: RunDoctor) -> None:
    for vmid in (320, 310):
        stand.add_vm(vmid, f"agent-{vmid}", node="pve1", status="running", config={"agent": "1"})
        stand.fail("GET", f"/nodes/pve1/qemu/{vmid}/agent/network-get-interfaces", 500, "agent not running")
    row = only(run_doctor().of("ipam"))
    assert (row.status, row.subject) == (Status.WARN, "ipv4Config.addresses")
    assert row.seen.endswith("but the guest agents of VMs 310, 320 could not be asked"), row.seen
    assert row.advice == "grant the doctor's token VM.GuestAgent.Audit on /vms to see their addresses"


def test_a_clash_outweighs_the_agents_that_could_not_be_asked(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.add_vm(301, "legacy-db", node="pve2", status="running", config={"ipconfig0": "ip=192.0.2.120/24"})
    stand.add_vm(310, "agent-310", node="pve1", status="running", config={"agent": "1"})
    stand.fail("GET", "/nodes/pve1/qemu/310/agent/network-get-interfaces", 500, "QEMU guest agent is not running")
    rows = run_doctor().of("ipam")
    assert [r.status for r in rows] == [Status.FAIL]


def test_a_template_with_two_bad_disks_names_both(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.storages["san-lvm"] = {"type": "lvm", "vgname": "san", "active": 1, "content": "images", "shared": 1,
                                 "files": set()}
    stand.vm(TEMPLATE).config.update({"scsi0": "ceph-vm:vm-9000-disk-0,size=4G",
                                      "scsi1": "san-lvm:vm-9000-disk-1,size=1G"})
    row = only(run_doctor().of("clone"))
    assert row.status is Status.FAIL
    assert row.seen == ("full: false with template 9000: scsi0 ceph-vm:vm-9000-disk-0 is not a base volume; "
                        "scsi1 is on san-lvm (type lvm), which cannot hold linked clones")


def test_a_full_clone_target_among_no_visible_storage(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    stand.fail("GET", "/storage", 500, "storage config locked")
    report = run_doctor(tenant_spec(lambda c, p: p["spec"]["proxmox"].update(full=True, storage="nvme")))
    row = only(report.of("clone"))
    assert row.seen == "storage 'nvme' does not exist (storages: none visible)"
    assert row.advice == "name a storage from `pvesm status` with content `images`"


def test_a_full_clone_target_disabled_on_the_templates_node(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    stand.storages["ceph-vm"]["nodes"] = "pve2"
    report = run_doctor(tenant_spec(lambda c, p: p["spec"]["proxmox"].update(full=True, storage="ceph-vm")))
    row = only(report.of("clone"))
    assert (row.status, row.seen) == (Status.FAIL, "storage 'ceph-vm' is not enabled on pve1")
    assert row.advice == "enable it for pve1 (`pvesm set ceph-vm --nodes ...`)"


def test_a_clone_right_held_through_the_templates_pool_counts(stand: FakePve, run_doctor: RunDoctor) -> None:
    """Proxmox checks /vms/<id> against the ACLs of the VM's pool too; so does the doctor."""
    assert stand.acl is not None
    stand.acl[TOKEN] = [(p, privs) for p, privs in stand.acl[TOKEN] if p != f"/vms/{TEMPLATE}"]
    stand.pools["templates"] = {TEMPLATE}
    stand.vm(TEMPLATE).pool = "templates"
    stand.grant(TOKEN, "/pool/templates", "VM.Audit", "VM.Clone")
    rows = run_doctor().of("privileges")
    assert [r for r in rows if r.status is not Status.PASS] == []


def test_plain_http_under_insecure_is_a_warning_with_the_fix(
    stand: FakePve, run_doctor: RunDoctor
) -> None:
    row = only(run_doctor(url=stand.url.replace("https://", "http://"), insecure=True).of("url"))
    assert row.status is Status.WARN and row.seen.endswith(" (spec.proxmox.insecure is true)")
    assert row.advice.startswith("use https://")


def test_a_failed_verification_advises_the_ca_file_on_both_rows(stand: FakePve, tenant_spec: Any) -> None:
    from tenantctl.proxmox.client import Target
    from tenantctl.proxmox.doctor import doctor

    report = doctor(tenant_spec(), Target(stand.url, TOKEN, "s3cr3t-token-value"))
    advice = "pass --ca-file with the CA that signed the certificate, or set spec.proxmox.insecure: true"
    assert report.of("auth")[0].advice == advice and report.of("tls")[0].advice == advice


def test_a_wrong_secret_is_told_what_to_check(run_doctor: RunDoctor) -> None:
    row = only(run_doctor(secret="wrong").of("auth"))
    assert row.advice == ("check the token id (user@realm!name), PROXMOX_TOKEN_SECRET and that the token is "
                          "neither expired nor deleted")


def test_without_a_proxmox_cluster_the_input_is_refused(spec_documents: list[dict[str, Any]]) -> None:
    cluster, _ = spec_documents
    cluster["spec"] = {"substrate": "kubevirt"}
    tenant = parse_tenant_documents([cluster])
    with pytest.raises(InvalidInput) as refused:
        pick_cluster(tenant, None)
    (problem,) = refused.value.errors
    assert (problem.path, problem.message) == ("input", "none on substrate proxmox (clusters: tenant-acme/acme "
                                                        "(kubevirt))")
    with pytest.raises(InvalidInput) as named:
        pick_cluster(tenant, "acme")
    assert named.value.errors[0].path == "--cluster"


def test_two_proxmox_clusters_need_a_name(spec_documents: list[dict[str, Any]]) -> None:
    first, _ = spec_documents
    second = {**first, "metadata": {"name": "beta", "namespace": "tenant-acme"}}
    tenant = parse_tenant_documents([first, second])
    with pytest.raises(InvalidInput) as refused:
        pick_cluster(tenant, None)
    (problem,) = refused.value.errors
    assert problem.message == ("several on substrate proxmox; pass --cluster NAME (clusters: tenant-acme/acme "
                               "(proxmox), tenant-acme/beta (proxmox))")
    assert pick_cluster(tenant, "beta").metadata.name == "beta"


def test_every_storage_class_gets_its_row_whatever_the_one_before_it_found(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    classes = [{"name": "gone", "storage": "nvme"}, {"name": "isos", "storage": "local"},
               {"name": "half", "storage": "tenant-zfs"}, {"name": "rbd", "storage": "ceph-vm", "default": True}]
    stand.storages["tenant-zfs"]["nodes"] = "pve1"
    rows = run_doctor(tenant_spec(lambda c, p: c["spec"]["proxmox"]["csi"].update(storageClasses=classes))).of(
        "csi-storage")
    assert [(r.subject, r.status) for r in rows] == [
        ("StorageClass gone: nvme", Status.FAIL), ("StorageClass isos: local", Status.FAIL),
        ("StorageClass half: tenant-zfs", Status.FAIL), ("StorageClass rbd: ceph-vm", Status.PASS)]
    assert rows[1].seen == "storage 'local' holds 'iso,vztmpl,backup'"
    assert rows[2].seen == "storage 'tenant-zfs' is not enabled on pve2"


def test_what_the_pool_leaves_out_is_sized_from_its_template(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    """capmox clones the template's cores × sockets, or its memory, where the pool names none."""
    stand.vm(TEMPLATE).config.update(cores="4", sockets="2", memory="3072")
    cores = only(run_doctor(tenant_spec(lambda c, p: p["spec"]["resources"].pop("cpu"))).of("cores"))
    assert (cores.status, cores.seen) == (Status.FAIL, "a VM gets 8 vCPUs; pve1 has 4, pve2 has 4")
    memory = only(run_doctor(tenant_spec(lambda c, p: p["spec"]["resources"].pop("memory"))).of("memory"))
    assert memory.seen.startswith("3 VMs × 3.0 GiB (replicas + surge)"), memory.seen


def test_an_untagged_template_is_listed_with_empty_tags(stand: FakePve, run_doctor: RunDoctor) -> None:
    del stand.vm(TEMPLATE).config["tags"]
    row = only(run_doctor().of("template"))
    assert row.status is Status.FAIL and "9000 'talos-v1.13.6' on pve1 (tags '')" in row.seen, row.seen


def test_an_unreadable_resource_list_is_named_by_the_template_and_ipam_rows(
    stand: FakePve, run_doctor: RunDoctor
) -> None:
    stand.fail("GET", "/cluster/resources", 500, "cluster resources broken")
    report = run_doctor()
    for check in ("template", "ipam"):
        assert any(r.status is Status.WARN and r.seen.startswith("could not read resources: ")
                   for r in report.of(check)), (check, report.of(check))


def test_a_pve_older_than_8_warns_that_the_tables_assume_8(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.version = "7.4.17"
    row = only(run_doctor().of("version"))
    assert (row.status, row.subject, row.seen) == (Status.WARN, "PVE 7.4.17", "older than PVE 8")
    assert row.advice == "untested: SDN.Use and the privilege names in the tables assume PVE 8 or later"


def test_a_template_id_no_vm_has_is_named(run_doctor: RunDoctor, tenant_spec: Any) -> None:
    def by_id(c: dict[str, Any], p: dict[str, Any]) -> None:
        p["spec"]["proxmox"].pop("templateTags")
        p["spec"]["proxmox"]["templateID"] = 9999

    row = only(run_doctor(tenant_spec(by_id)).of("template"))
    assert (row.status, row.seen) == (Status.FAIL, "templateID 9999 does not exist (or the token cannot see it)")
    assert row.advice == "create the Talos template with that VMID, or grant VM.Audit on it"


def test_a_vm_with_exactly_its_hosts_vcpus_fits_and_one_more_does_not(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    """Proxmox refuses a VM with more vCPUs than its host has threads, not one with as many."""
    threads = 4  # every fakepve node's /nodes maxcpu; the FAIL row below reads it back
    exact = only(run_doctor(tenant_spec(lambda c, p: p["spec"]["resources"].update(cpu=threads))).of("cores"))
    assert (exact.status, exact.seen) == (Status.PASS, f"{threads} vCPUs per VM fit every node of the pool")
    over = only(run_doctor(tenant_spec(lambda c, p: p["spec"]["resources"].update(cpu=threads + 1))).of("cores"))
    assert (over.status, over.seen) == (
        Status.FAIL, f"a VM gets {threads + 1} vCPUs; pve1 has {threads}, pve2 has {threads}")
