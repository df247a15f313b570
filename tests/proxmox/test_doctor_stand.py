"""The doctor against fakepve: the clean stand passes every row, each seeded fault fails its row with advice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from fakepve import FakePve  # type: ignore[import-untyped]

from tenantctl.proxmox.checks import CHECKS
from tenantctl.proxmox.report import Report, Status

RunDoctor = Callable[..., Report]
TEMPLATE = 9000


def test_clean_stand_passes_every_row(run_doctor: RunDoctor) -> None:
    report = run_doctor()
    assert [r for r in report.rows if r.status is not Status.PASS] == []
    assert {r.check for r in report.rows} >= {c.name for c in CHECKS}
    assert report.exit_code == 0
    [template] = [r for r in report.of("template") if r.seen.startswith("capmox selects")]
    assert template.seen == "capmox selects 9000 'talos-v1.13.6' on pve1 (tags 'talos;talos-v1.13.6')", "no extras"


@dataclass(frozen=True)
class Fault:
    """One thing broken on the clean stand, and the row that must name it."""

    stand: Callable[[FakePve], None] | None = None
    tenant: Callable[[dict[str, Any], dict[str, Any]], object] | None = None
    url: Callable[[str], str] | None = None
    check: str = ""
    seen: str = ""
    advice: str = ""
    subject: str = ""


def _revoke(pve: FakePve, path: str, privilege: str) -> None:
    assert pve.acl is not None
    pve.acl["capmox@pve!capi"] = [(p, ps - {privilege} if p == path else ps) for p, ps in pve.acl["capmox@pve!capi"]]


def _pool_spec(pool: dict[str, Any]) -> dict[str, Any]:
    px: dict[str, Any] = pool["spec"]["proxmox"]
    return px


def _duplicate_template(pve: FakePve) -> None:
    pve.add_vm(9001, "talos-v1.13.6", node="pve2", template=True,
               config={"scsi0": "local-lvm:base-9001-disk-0", "tags": "talos-v1.13.6;talos", "template": 1})


def _template_on_thick_lvm(pve: FakePve) -> None:
    pve.storages["san-lvm"] = {"type": "lvm", "vgname": "san", "active": 1, "content": "images", "shared": 1,
                               "files": set()}
    vm = pve.vm(TEMPLATE)
    vm.config["scsi0"] = "san-lvm:vm-9000-disk-0,size=4G"


def _ip_in_use(pve: FakePve) -> None:
    pve.add_vm(301, "legacy-db", node="pve2", status="running", config={"ipconfig0": "ip=192.0.2.120/24,gw=192.0.2.1"})
    agent_vm = pve.add_vm(302, "legacy-web", node="pve1", status="running", config={"agent": "1"})
    pve.grant("capmox@pve!capi", "/vms", "VM.GuestAgent.Audit")
    agent_vm.agent = {"interfaces": [{"name": "eth0", "ip-addresses": [
        {"ip-address": "192.0.2.121", "ip-address-type": "ipv4", "prefix": 24}]}]}


def _spread(per_node: bool = False) -> Callable[[dict[str, Any], dict[str, Any]], object]:
    return lambda c, p: _pool_spec(p).update(placement="spread", perNodeTemplates=per_node)


def _node_copies(pve: FakePve, nodes: tuple[str, ...] = ("pve1",), storage: str = "local-lvm") -> None:
    """The template as per-node copies on node-local storage, each tagged for its node."""
    pve.vms.remove(pve.vm(TEMPLATE))
    for i, node in enumerate(nodes):
        pve.add_vm(TEMPLATE + i, "talos-v1.13.6", node=node, template=True,
                   config={"scsi0": f"{storage}:base-{TEMPLATE + i}-disk-0,size=4G", "cpu": "host",
                           "tags": f"talos;talos-v1.13.6;node-{node}", "template": 1})


def _device(addresses: list[str]) -> Callable[[dict[str, Any], dict[str, Any]], object]:
    device = {"name": "net1", "bridge": "vmbr0", "vlan": 30,
              "ipv4": {"addresses": addresses, "prefix": 24}}
    return lambda c, p: _pool_spec(p)["network"].update(additionalDevices=[device])


FAULTS: dict[str, Fault] = {
    "template left at kvm64": Fault(
        stand=lambda pve: pve.vm(TEMPLATE).config.pop("cpu"), check="cpu-type",
        seen="template 9000 has CPU type kvm64 (no cpu set: Proxmox's default), below x86-64-v2",
        advice="qm set 9000 --cpu x86-64-v2-AES"),
    "template on qemu64 with flags": Fault(
        stand=lambda pve: pve.vm(TEMPLATE).config.update(cpu="cputype=qemu64,flags=+aes"), check="cpu-type",
        seen="CPU type qemu64, below x86-64-v2"),
    "a full node under a spread pool": Fault(
        tenant=_spread(), stand=lambda pve: pve.add_vm(500, "big", node="pve2", config={"memory": 6144}),
        check="memory", subject="NodePool/md0 on pve2",
        seen="needs 8.0 GiB (1+1 VMs × 4.0 GiB); 2.0 GiB reservable on pve2 (100% of 8.0 GiB, less 6.0 GiB",
        advice="free 6.0 GiB on pve2"),
    "an unspread pool that does not fit its nodes": Fault(
        stand=lambda pve: pve.add_vm(501, "big", node="pve1", config={"memory": 7168}),
        check="memory", subject="NodePool/md0", seen="3 VMs × 4.0 GiB (replicas + surge) over pve1, pve2: 2 fit",
        advice="InsufficientMemory"),
    "every allowed node offline": Fault(
        stand=lambda pve: (pve.set_node_offline("pve1"), pve.set_node_offline("pve2")),
        check="memory", subject="NodePool/md0", seen="over no online node: 0 fit", advice="InsufficientMemory"),
    "more vCPUs than a node has": Fault(
        tenant=lambda c, p: p["spec"]["resources"].update(cpu=8), check="cores",
        seen="a VM gets 8 vCPUs; pve1 has 4, pve2 has 4", advice="Proxmox refuses to start"),
    "an exhausted pool of a further NIC": Fault(
        tenant=_device(["10.30.0.10-10.30.0.12"]), check="capacity", subject="NodePool/md0 net1",
        stand=lambda pve: pve.add_vm(304, "nas", node="pve1", config={"ipconfig0": "ip=10.30.0.11/24"}),
        seen="2 free of 3 usable; the pool's machines need 3 at once (replicas + surge); held by other guests: "
             "10.30.0.11", advice="add addresses to net1's ipv4.addresses"),
    "a missing per-node template": Fault(
        tenant=_spread(per_node=True), stand=_node_copies, check="template", subject="NodePool/md0 on pve2",
        seen="no template for node pve2: found 0 VM templates with tags 'node-pve2;talos;talos-v1.13.6'",
        advice="put a Talos template on pve2's storage tagged exactly 'node-pve2;talos;talos-v1.13.6'"),
    "a per-node copy on the wrong node": Fault(
        tenant=_spread(per_node=True),
        stand=lambda pve: (_node_copies(pve, ("pve1", "pve2")), pve.vm(TEMPLATE + 1).__setattr__("node", "pve1")),
        check="template", subject="NodePool/md0 on pve2", seen="the copy tagged for pve2 is 9001",
        advice="move it to pve2"),
    "one template on local storage under a spread pool": Fault(
        tenant=_spread(), stand=lambda pve: pve.vm(TEMPLATE).config.update(scsi0="local-lvm:base-9000-disk-0"),
        check="placement", seen="but allowedNodes also names pve2", advice="perNodeTemplates: true"),
    "url ending in /api2/json": Fault(
        url=lambda u: u + "/api2/json", check="url", seen="ends in /api2/json", advice="capmox appends it"),
    "http without insecure": Fault(
        url=lambda u: u.replace("https://", "http://"), check="url", seen="plain http while", advice="use https://"),
    "missing template": Fault(
        stand=lambda pve: pve.vms.remove(pve.vm(TEMPLATE)), check="template",
        seen="found 0 VM templates with tags 'talos;talos-v1.13.6'",
        advice="qm set <vmid> --tags 'talos;talos-v1.13.6'"),
    "superset-only tags": Fault(
        stand=lambda pve: pve.vm(TEMPLATE).config.update(tags="talos;talos-v1.13.6;zfs"), check="template",
        seen="not selected: 9000 'talos-v1.13.6' on pve1 (tags 'talos;talos-v1.13.6;zfs') carries extra tags ['zfs']",
        advice="set equality, not containment"),
    "duplicate exact tags on two nodes": Fault(
        stand=_duplicate_template, check="template", seen="found 2 VM templates with tags 'talos;talos-v1.13.6'",
        advice="keep a single copy on shared storage"),
    "linked clone from a storage without linked clones": Fault(
        stand=_template_on_thick_lvm, check="clone", seen="san-lvm (type lvm), which cannot hold linked clones",
        advice="set full: true"),
    "template disk that is not a base volume": Fault(
        stand=lambda pve: pve.vm(TEMPLATE).config.update(scsi0="ceph-vm:vm-9000-disk-0,size=4G"), check="clone",
        seen="scsi0 ceph-vm:vm-9000-disk-0 is not a base volume", advice="`qm template` there"),
    "CSI storage missing on a node": Fault(
        stand=lambda pve: pve.storages["tenant-zfs"].update(nodes="pve1"), check="csi-storage",
        seen="storage 'tenant-zfs' is not enabled on pve2", advice="enable the storage there"),
    "CSI storage that does not exist": Fault(
        stand=lambda pve: pve.storages.pop("tenant-zfs"), check="csi-storage",
        seen="storage 'tenant-zfs' does not exist"),
    "missing pool": Fault(
        stand=lambda pve: pve.pools.pop("tenant-acme"), check="pool", seen="pool 'tenant-acme' does not exist",
        advice="pveum pool add tenant-acme"),
    "missing privilege": Fault(
        stand=lambda pve: _revoke(pve, "/storage/tenant-zfs", "Datastore.Allocate"), check="privileges",
        subject="csi at /storage/tenant-zfs", seen="lacks Datastore.Allocate",
        advice="pveum acl modify /storage/tenant-zfs --tokens 'capmox@pve!capi'"),
    "missing bridge": Fault(
        tenant=lambda c, p: _pool_spec(p)["network"].update(bridge="vmbr9"), check="bridge",
        seen="no bridge 'vmbr9' on pve1 (bridges: vmbr0)", advice="create vmbr9 on pve1"),
    "IP already used by a VM": Fault(
        stand=_ip_in_use, check="ipam", seen="192.0.2.120 in ipv4Config.addresses is already used by VM 301",
        advice="remove it from spec.proxmox.ipv4Config.addresses"),
    "IP reported by a guest agent": Fault(
        stand=_ip_in_use, check="ipam", seen="192.0.2.121 in ipv4Config.addresses is already used by VM 302"),
    "IP set on a container": Fault(
        stand=lambda pve: pve.add_ct(401, "legacy-ct", node="pve1",
                                     config={"net0": "name=eth0,bridge=vmbr0,ip=192.0.2.130/24,gw=192.0.2.1"}),
        check="ipam", seen="192.0.2.130 in ipv4Config.addresses is already used by CT 401 'legacy-ct'"),
    "offline node": Fault(
        stand=lambda pve: pve.set_node_offline("pve2"), check="nodes", seen="node 'pve2' is offline",
        advice="bring the node back"),
    "node that does not exist": Fault(
        tenant=lambda c, p: c["spec"]["proxmox"].update(allowedNodes=["pve1", "pve7"]), check="nodes",
        seen="no node 'pve7' (nodes: pve1, pve2)"),
    "template on local storage with several allowed nodes": Fault(
        stand=lambda pve: pve.vm(TEMPLATE).config.update(scsi0="local-lvm:base-9000-disk-0,size=4G"),
        check="placement", seen="local storage local-lvm of pve1, but allowedNodes also names pve2",
        advice="VM uses local storage"),
    "templateID that is not a template": Fault(
        stand=lambda pve: pve.add_vm(9100, "plain-vm", node="pve1"),
        tenant=lambda c, p: (_pool_spec(p).pop("templateTags"), _pool_spec(p).update(templateID=9100)),
        check="template", seen="VM 9100 'plain-vm' is not a template", advice="qm template 9100"),
    "templateID on another node than sourceNode": Fault(
        tenant=lambda c, p: (_pool_spec(p).pop("templateTags"), _pool_spec(p).update(templateID=TEMPLATE,
                                                                                     sourceNode="pve2")),
        check="template", seen="template 9000 is on node pve1, not on sourceNode pve2", advice="sourceNode: pve1"),
    "full clone onto a storage without images": Fault(
        tenant=lambda c, p: _pool_spec(p).update(full=True, storage="local"), check="clone",
        seen="storage 'local' holds 'iso,vztmpl,backup', not images"),
    "full clone onto a storage that does not exist": Fault(
        tenant=lambda c, p: _pool_spec(p).update(full=True, storage="nvme"), check="clone",
        seen="storage 'nvme' does not exist"),
    "more workers than free addresses": Fault(
        tenant=lambda c, p: c["spec"]["proxmox"]["ipv4Config"].update(addresses=["192.0.2.100-192.0.2.102"]),
        check="capacity", seen="2 free of 3 usable; the pools can claim 3",
        stand=lambda pve: pve.add_vm(303, "squatter", config={"ipconfig0": "ip=192.0.2.101/24"})),
    "wrong token secret": Fault(check="auth", seen="401", advice="PROXMOX_TOKEN_SECRET"),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_seeded_fault_fails_its_row_with_advice(
    name: str, stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    fault = FAULTS[name]
    if fault.stand is not None:
        fault.stand(stand)
    tenant = tenant_spec(fault.tenant) if fault.tenant is not None else None
    url = fault.url(stand.url) if fault.url is not None else None
    secret = "wrong" if fault.check == "auth" else None
    report = run_doctor(tenant, url=url, **({"secret": secret} if secret else {}))
    failed = [r for r in report.rows if r.status is Status.FAIL and r.check == fault.check]
    assert failed, [r for r in report.rows if r.status is not Status.PASS]
    row = next((r for r in failed if fault.seen in r.seen), None)
    assert row is not None, [r.seen for r in failed]
    assert fault.advice in row.advice
    assert fault.subject in row.subject
    assert report.exit_code == 1


def test_per_node_templates_on_local_storage_pass_every_row(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    _node_copies(stand, ("pve1", "pve2"))
    # Each copy is a template of its own: capmox needs VM.Clone on each.
    stand.grant("capmox@pve!capi", f"/vms/{TEMPLATE + 1}", "VM.Audit", "VM.Clone")
    stand.grant("capmox@pve!capi", "/storage/local-lvm", "Datastore.AllocateSpace")
    report = run_doctor(tenant_spec(_spread(per_node=True)))
    assert report.of("privileges")
    assert [r for r in report.rows if r.status is not Status.PASS] == []
    assert {r.subject for r in report.of("template")} == {"NodePool/md0 on pve1", "NodePool/md0 on pve2"}
    assert {r.subject for r in report.of("memory")} == {"NodePool/md0 on pve1", "NodePool/md0 on pve2"}


def test_the_tenants_own_workers_hold_pool_addresses_and_memory_without_a_clash(
    stand: FakePve, run_doctor: RunDoctor
) -> None:
    for vmid, node, ip in ((601, "pve1", "192.0.2.100"), (602, "pve2", "192.0.2.101")):
        stand.add_vm(vmid, f"acme-md0-{vmid}", node=node, status="running",
                     config={"memory": 7168, "ipconfig0": f"ip={ip}/24",
                             "tags": "talos;tenant.tenant-acme.acme;nodepool.md0;tenantctl"})
    report = run_doctor()
    assert [r for r in report.rows if r.status is not Status.PASS] == []
    stand.vm(601).config["tags"] = "talos"
    failed = {r.check for r in run_doctor().rows if r.status is Status.FAIL}
    assert failed == {"ipam", "memory"}


def test_a_further_nics_pool_with_room_passes(stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any) -> None:
    stand.add_vm(304, "nas", node="pve1", config={"ipconfig0": "ip=10.30.0.11/24"})
    (row,) = [r for r in run_doctor(tenant_spec(_device(["10.30.0.10-10.30.0.13"]))).of("capacity")
              if r.subject == "NodePool/md0 net1"]
    assert row.status is Status.PASS
    assert row.seen.startswith("3 free of 4 usable; the pool's machines need 3 at once")


def test_memory_adjustment_scales_what_a_node_offers(stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any) -> None:
    """At 50 % a node offers 4 GiB: 1+1 VMs of 4 GiB per node do not fit; at 0 capmox checks nothing."""
    def hints(percent: int) -> Callable[[dict[str, Any], dict[str, Any]], object]:
        def edit(c: dict[str, Any], p: dict[str, Any]) -> None:
            c["spec"]["proxmox"]["schedulerHints"] = {"memoryAdjustment": percent}
            _pool_spec(p)["placement"] = "spread"
        return edit

    rows = run_doctor(tenant_spec(hints(50))).of("memory")
    assert [r.status for r in rows] == [Status.FAIL, Status.FAIL]
    assert "4.0 GiB reservable on pve1 (50% of 8.0 GiB" in rows[0].seen
    (row,) = run_doctor(tenant_spec(hints(0))).of("memory")
    assert row.status is Status.WARN and row.seen.startswith("0: capmox places VMs without a memory check")
    assert row.advice == "set memoryAdjustment (100 = a node's memory) so a full node is refused at clone time"


def test_a_template_on_a_storage_type_the_doctor_does_not_know_cannot_be_linked_cloned(
    stand: FakePve, run_doctor: RunDoctor
) -> None:
    stand.storages["odd"] = {"type": "somefs", "active": 1, "content": "images", "shared": 1, "files": set()}
    stand.vm(TEMPLATE).config["scsi0"] = "odd:base-9000-disk-0,size=4G"
    (row,) = run_doctor().of("clone")
    assert row.status is Status.FAIL
    assert "scsi0 is on odd (type somefs), which cannot hold linked clones" in row.seen


def test_a_template_disk_on_a_storage_the_api_does_not_list_is_of_unknown_type(
    stand: FakePve, run_doctor: RunDoctor
) -> None:
    """A storage removed from storage.cfg (or hidden from the token) still names the template's disk."""
    stand.vm(TEMPLATE).config["scsi0"] = "gone:base-9000-disk-0,size=4G"
    (row,) = run_doctor().of("clone")
    assert row.status is Status.FAIL
    assert "scsi0 is on gone (type unknown), which cannot hold linked clones" in row.seen


def test_a_template_selected_by_tags_on_another_node_than_sourcenode_warns(
    run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    (row,) = [r for r in run_doctor(tenant_spec(lambda c, p: _pool_spec(p).update(sourceNode="pve2"))).rows
              if r.check == "placement" and r.status is Status.WARN]
    assert row.subject == "NodePool/md0"
    assert row.seen == "the selected template lives on pve1; sourceNode is pve2"
    assert "ignores sourceNode with templateTags" in row.advice


def test_pve9_warns_about_ccm_ha_groups(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.version = "9.0.10"
    (row,) = run_doctor().of("version")
    assert row.status is Status.WARN and "ha-groups" in row.advice


def test_template_with_agent_on_vanilla_talos_warns(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.vm(TEMPLATE).config["agent"] = "1"
    rows = [r for r in run_doctor().of("talos") if r.status is Status.WARN]
    assert len(rows) == 1 and "qemu-guest-agent" in rows[0].advice


def test_pool_not_set_warns_about_vms_scope(run_doctor: RunDoctor, tenant_spec: Any) -> None:
    report = run_doctor(tenant_spec(lambda c, p: _pool_spec(p).pop("pool")))
    (row,) = report.of("pool")
    assert row.status is Status.WARN and "/vms" in row.advice


def test_insecure_spec_warns_and_skips_verification(stand: FakePve, tenant_spec: Any) -> None:
    """Without a CA file the stand's self-signed certificate fails verification (the test below); with
    `insecure` the same call, still without one, authenticates: verification was skipped, not passed."""
    from tenantctl.proxmox.client import Target
    from tenantctl.proxmox.doctor import doctor

    report = doctor(tenant_spec(), Target(stand.url, "capmox@pve!capi", "s3cr3t-token-value", insecure=True))
    (tls,) = report.of("tls")
    assert (tls.status, tls.advice) == (Status.WARN, "install a certificate your CA signs and set insecure: false")
    assert report.of("auth")[0].status is Status.PASS


def test_superset_beside_an_exact_match_is_named_but_passes(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.add_vm(9002, "talos-zfs", node="pve1", template=True,
                 config={"scsi0": "ceph-vm:base-9002-disk-0", "tags": "talos;talos-v1.13.6;zfs", "template": 1})
    (row,) = run_doctor().of("template")
    assert row.status is Status.PASS
    assert "capmox selects 9000" in row.seen and "not selected: 9002" in row.seen


def test_csi_disabled_needs_no_csi_privileges(stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any) -> None:
    _revoke(stand, "/storage/tenant-zfs", "Datastore.Allocate")
    tenant = tenant_spec(lambda c, p: c["spec"]["proxmox"].update(csi={"enabled": False}))
    report = run_doctor(tenant)
    assert [r.subject for r in report.of("privileges")] == ["capmox", "ccm"]


def test_tls_is_verified_unless_the_spec_says_insecure(stand: FakePve, tenant_spec: Any) -> None:
    from tenantctl.proxmox.client import Target
    from tenantctl.proxmox.doctor import doctor

    verified = doctor(tenant_spec(), Target(stand.url, "capmox@pve!capi", "s3cr3t-token-value"))
    (auth,) = verified.of("auth")
    assert auth.status is Status.FAIL and "TLS verification failed" in auth.seen
    assert "--ca-file" in auth.advice
    unverified = doctor(tenant_spec(), Target(stand.url, "capmox@pve!capi", "s3cr3t-token-value", insecure=True))
    assert unverified.of("auth")[0].status is Status.PASS


def test_privileges_at_an_unresolved_template_are_not_guessed(stand: FakePve, run_doctor: RunDoctor) -> None:
    stand.vm(TEMPLATE).config["tags"] = "talos;talos-v1.13.6;zfs"
    rows = run_doctor().of("privileges")
    assert [r.status for r in rows if "<template" in r.subject] == [Status.WARN, Status.WARN]
    assert {r.subject for r in rows if "<template" in r.subject} == {
        "capmox at /vms/<template of md0>", "capmox at /storage/<template storage of md0>",
    }
    assert not [r for r in rows if r.status is Status.FAIL]


def _closed_port() -> int:
    """A loopback port nothing listens on: bound, then released before the doctor connects."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("insecure", [False, True])
def test_tls_fails_when_nothing_answers(run_doctor: RunDoctor, insecure: bool) -> None:
    report = run_doctor(url=f"https://127.0.0.1:{_closed_port()}", insecure=insecure)
    (tls,) = report.of("tls")
    assert tls.status is Status.FAIL and "no TLS connection" in tls.seen
    assert "verified" not in tls.seen and report.exit_code == 1
    (auth,) = report.of("auth")
    assert auth.seen.startswith("no answer: ConnectionError: HTTPSConnectionPool(host='127.0.0.1'"), auth.seen
    assert auth.advice == "check that the URL reaches the Proxmox API (host, port 8006, firewall)"


def test_tls_row_names_the_failed_verification(stand: FakePve, tenant_spec: Any) -> None:
    from tenantctl.proxmox.client import Target
    from tenantctl.proxmox.doctor import doctor

    (tls,) = doctor(tenant_spec(), Target(stand.url, "capmox@pve!capi", "s3cr3t-token-value")).of("tls")
    assert tls.status is Status.FAIL and "TLS verification failed" in tls.seen and "--ca-file" in tls.advice


def test_tls_passes_after_a_verified_handshake(run_doctor: RunDoctor) -> None:
    (tls,) = run_doctor().of("tls")
    assert tls.status is Status.PASS and tls.seen.startswith("connected; certificate verified against CA file")


# Every row a check can write, named here by hand: a row under another name would not be found by a
# person (or a script) filtering the report by check.
ROW_NAMES = frozenset({
    "url", "tls", "auth", "version", "nodes", "template", "placement", "clone", "cpu-type", "memory", "cores",
    "csi-storage", "pool", "bridge", "ipam", "gateway", "capacity", "privileges", "talos",
})


@pytest.mark.parametrize("variant", ["clean", "full clone", "template id", "spread per node", "cpu from template"])
def test_every_row_carries_the_name_of_its_check(
    variant: str, stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    edits: dict[str, Callable[[dict[str, Any], dict[str, Any]], object]] = {
        "clean": lambda c, p: None,
        "full clone": lambda c, p: _pool_spec(p).update(full=True),
        "template id": lambda c, p: (_pool_spec(p).pop("templateTags"), _pool_spec(p).update(templateID=TEMPLATE)),
        "spread per node": _spread(per_node=True),
        "cpu from template": lambda c, p: p["spec"]["resources"].pop("cpu"),
    }
    if variant == "spread per node":
        _node_copies(stand, ("pve1", "pve2"))
    stand.vm(TEMPLATE).config["cores"] = "3"
    rows = run_doctor(tenant_spec(edits[variant])).rows
    assert {r.check for r in rows} <= ROW_NAMES, {r.check for r in rows} - ROW_NAMES
    by_check = {r.check for r in rows}
    assert {"nodes", "template", "clone", "memory", "cores"} <= by_check
    if variant == "cpu from template":
        (cores,) = [r for r in rows if r.check == "cores"]
        assert cores.seen == "3 vCPUs per VM fit every node of the pool"
    if variant == "full clone":
        (clone,) = [r for r in rows if r.check == "clone"]
        assert clone.seen == "full clone onto the template's own storage"


@pytest.mark.parametrize("held", [1, 6])
def test_a_further_nics_pool_names_at_most_five_guests_holding_its_addresses(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any, held: int
) -> None:
    for i in range(held):
        stand.add_vm(310 + i, f"guest{i}", node="pve1", config={"ipconfig0": f"ip=10.30.0.{11 + i}/24"})
    rows = run_doctor(tenant_spec(_device(["10.30.0.10-10.30.0.30"]))).of("capacity")
    [row] = [r for r in rows if r.subject == "NodePool/md0 net1"]
    shown = ", ".join(f"10.30.0.{11 + i}" for i in range(min(held, 5)))
    assert row.seen.endswith(f"held by other guests: {shown}" + (" …" if held > 5 else "")), row.seen


def _subnet(gateway: str, addresses: str) -> Callable[[dict[str, Any], dict[str, Any]], object]:
    return lambda c, p: c["spec"]["proxmox"]["ipv4Config"].update(gateway=gateway, addresses=[addresses])


def test_a_bridge_carrying_another_subnet_than_the_workers_warns(run_doctor: RunDoctor, tenant_spec: Any) -> None:
    """The stand's vmbr0 is 192.0.2.11/24 on every node; workers on 198.51.100.0/24 without a VLAN would
    not reach their gateway."""
    (row,) = run_doctor(tenant_spec(_subnet("198.51.100.1", "198.51.100.100-198.51.100.150"))).of("gateway")
    assert (row.status, row.subject) == (Status.WARN, "198.51.100.1")
    assert row.seen == ("the worker subnet is 198.51.100.0/24 but vmbr0 on pve1 is 192.0.2.11/24 (NodePool/md0); "
                        "vmbr0 on pve2 is 192.0.2.11/24 (NodePool/md0)")
    assert row.advice == "check that the bridge carries the workers' subnet, or set network.vlan"


def test_a_vlan_tagged_pool_is_not_held_to_the_bridges_own_subnet(run_doctor: RunDoctor, tenant_spec: Any) -> None:
    def tagged(c: dict[str, Any], p: dict[str, Any]) -> None:
        _subnet("198.51.100.1", "198.51.100.100-198.51.100.150")(c, p)
        _pool_spec(p)["network"]["vlan"] = 40

    (row,) = run_doctor(tenant_spec(tagged)).of("gateway")
    assert (row.status, row.seen) == (Status.PASS, "on-prefix for every address (198.51.100.0/24)")


def test_a_spread_group_that_exactly_fills_its_node_fits_and_a_mebibyte_more_does_not(
    stand: FakePve, run_doctor: RunDoctor, tenant_spec: Any
) -> None:
    """capmox refuses a clone when the node's reservable memory is below the VMs' (InsufficientMemory), so the
    arithmetic holds at the byte: 1+1 VMs × 4 GiB on an 8 GiB node fit exactly; one MiB held by another guest
    does not."""
    exact = {r.subject: r for r in run_doctor(tenant_spec(_spread())).of("memory")}["NodePool/md0 on pve2"]
    assert (exact.status, exact.seen) == (Status.PASS, "needs 8.0 GiB (1+1 VMs × 4.0 GiB); 8.0 GiB reservable on "
                                                       "pve2 (100% of 8.0 GiB, less 0.0 GiB held by other guests)")
    stand.add_vm(502, "tiny", node="pve2", config={"memory": 1})
    short = {r.subject: r for r in run_doctor(tenant_spec(_spread())).of("memory")}["NodePool/md0 on pve2"]
    assert short.status is Status.FAIL, short.seen
    assert short.advice.startswith("free 0.0 GiB on pve2"), short.advice
