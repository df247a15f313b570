"""Fixtures of the doctor tests: a clean Proxmox stand on fakepve (loopback, verified TLS) and its tenant.

Each fault test starts from this stand and breaks one thing, so a FAIL can only come from that thing.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from typing import Any

import pytest
from fakepve import FakePve  # type: ignore[import-untyped]
from syrupy.assertion import SnapshotAssertion

from report_support import report_text
from tenantctl.proxmox.client import Target
from tenantctl.proxmox.doctor import doctor
from tenantctl.proxmox.report import Report
from tenantctl.spec import TenantInput, parse_tenant_documents

TOKEN_ID = "capmox@pve!capi"
SECRET = "s3cr3t-token-value"
TEMPLATE = 9000

CLUSTER: dict[str, Any] = {
    "apiVersion": "tenantctl.io/v1alpha1",
    "kind": "TenantCluster",
    "metadata": {"name": "acme", "namespace": "tenant-acme"},
    "spec": {
        "substrate": "proxmox",
        "proxmox": {
            "credentialsSecretName": "capmox-acme",
            "allowedNodes": ["pve1", "pve2"],
            "dnsServers": ["192.0.2.53"],
            "ipv4Config": {"addresses": ["192.0.2.100-192.0.2.150"], "prefix": 24, "gateway": "192.0.2.1"},
            "ccm": {"credentialsSecretName": "pve-ccm-acme"},
            "csi": {
                "credentialsSecretName": "pve-csi-acme",
                "storageClasses": [{"name": "pve-zfs", "storage": "tenant-zfs", "default": True}],
            },
        },
    },
}
POOL: dict[str, Any] = {
    "apiVersion": "tenantctl.io/v1alpha1",
    "kind": "NodePool",
    "metadata": {"name": "md0", "namespace": "tenant-acme"},
    "spec": {
        "cluster": "acme",
        "replicas": 2,
        "resources": {"cpu": 2, "memory": "4Gi"},
        "proxmox": {
            "sourceNode": "pve1",
            "templateTags": ["talos"],
            "full": False,
            "pool": "tenant-acme",
            "network": {"bridge": "vmbr0"},
        },
    },
}

VM_ADMIN = (
    "VM.Allocate", "VM.Audit", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Cloudinit",
    "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network", "VM.Config.Options",
    "VM.PowerMgmt", "VM.GuestAgent.Audit",
)
# What an operator grants for the three controllers on the clean stand, written out by hand so the
# privilege table in code is checked against an independent list.
GRANTS: list[tuple[str, tuple[str, ...]]] = [
    ("/", ("Sys.Audit",)),
    ("/nodes", ("Sys.Audit",)),
    ("/vms", ("VM.Audit",)),
    ("/pool/tenant-acme", (*VM_ADMIN, "Pool.Audit")),
    (f"/vms/{TEMPLATE}", ("VM.Audit", "VM.Clone")),
    ("/storage", ("Datastore.Audit",)),
    ("/storage/ceph-vm", ("Datastore.AllocateSpace",)),
    ("/storage/local", ("Datastore.AllocateSpace", "Datastore.AllocateTemplate")),
    ("/storage/tenant-zfs", ("Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.Audit")),
    ("/sdn/zones/localnetwork/vmbr0", ("SDN.Use",)),
]


def seed_clean_stand(pve: FakePve) -> None:
    """Two online nodes, one Talos template on shared RBD, the tenant's pool and ZFS storage, a scoped token."""
    pve.version, pve.release_version = "8.4.1", "8.4"
    pve.add_node("pve2")
    pve.add_ceph_storage("ceph-vm")
    pve.storages["tenant-zfs"] = {"type": "zfspool", "pool": "rpool/tenant-acme", "active": 1,
                                  "content": "images,rootdir", "files": set()}
    pve.add_vm(TEMPLATE, "talos-v1.13.6", node="pve1", template=True,
               config={"scsi0": "ceph-vm:base-9000-disk-0,size=4G", "tags": "talos;talos-v1.13.6", "agent": "0",
                       "cpu": "x86-64-v2-AES",
                       "template": 1})
    pve.pools["tenant-acme"] = set()
    pve.apitokens[TOKEN_ID] = SECRET
    for path, privs in GRANTS:
        pve.grant(TOKEN_ID, path, *privs)


@pytest.fixture
def stand(fakepve: FakePve) -> FakePve:
    seed_clean_stand(fakepve)
    return fakepve


def revoke(pve: FakePve, path: str, privilege: str) -> None:
    """Take one privilege away from the token at one path (also the `revoke_privilege` fixture)."""
    assert pve.acl is not None
    pve.acl[TOKEN_ID] = [(p, privs - {privilege} if p == path else privs) for p, privs in pve.acl[TOKEN_ID]]


Mutation = Callable[[dict[str, Any], dict[str, Any]], None]


def spec(mutate: Mutation | None = None) -> TenantInput:
    """The tenant that fits the clean stand, after `mutate(cluster, pool)` (also the `tenant_spec` fixture)."""
    cluster, pool = copy.deepcopy(CLUSTER), copy.deepcopy(POOL)
    if mutate is not None:
        mutate(cluster, pool)
    return parse_tenant_documents([cluster, pool])


_LOOPBACK_PORT = re.compile(r"(?<=127\.0\.0\.1:)\d+|(?<=port=)\d+")


def pinned_text(report: Report, ca_file: str) -> str:
    """`report_text`, the loopback stand's port and the CA file's path left out: what a snapshot pins."""
    return _LOOPBACK_PORT.sub("<port>", report_text(report)).replace(ca_file, "<ca-file>")


@pytest.fixture
def run_doctor(stand: FakePve, fakepve_cafile: str, snapshot: SnapshotAssertion) -> Callable[..., Report]:
    """Run the doctor against the stand; keyword arguments override the URL, secret, CA file or spec.
    Every report is also pinned whole, row by row and word by word, in the test's snapshot: a test
    states the rows it is about, the snapshot holds what the rest said."""

    def run(
        tenant: TenantInput | None = None, url: str | None = None, secret: str = SECRET, insecure: bool = False
    ) -> Report:
        target = Target(url or stand.url, TOKEN_ID, secret, insecure=insecure, ca_file=fakepve_cafile)
        report = doctor(tenant or spec(), target)
        assert pinned_text(report, fakepve_cafile) == snapshot
        return report

    return run


@pytest.fixture
def tenant_spec() -> Callable[[Mutation | None], TenantInput]:
    return spec


@pytest.fixture
def revoke_privilege() -> Callable[[FakePve, str, str], None]:
    return revoke


@pytest.fixture
def spec_documents() -> list[dict[str, Any]]:
    """The clean stand's TenantCluster and NodePool as YAML documents (fresh copies)."""
    return [copy.deepcopy(CLUSTER), copy.deepcopy(POOL)]
