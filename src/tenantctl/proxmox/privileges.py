"""The Proxmox privileges each controller's token needs, as data, and where a given spec needs them.

One table serves three readers: the README section (`render_privileges_markdown`), the doctor, which
compares a token's `/access/permissions` with `requirements_for(...)`, and `tenantctl audit`. A change of
privileges is a change of this data, never of the code that reads it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from tenantctl.spec import NodePool, TenantCluster

__all__ = [
    "PRIVILEGE_TABLES",
    "PVE8_EQUIVALENTS",
    "SCOPES",
    "Controller",
    "Grant",
    "Requirement",
    "Scope",
    "ScopeInfo",
    "StandFacts",
    "render_privileges_markdown",
    "requirements_for",
]


class Controller(StrEnum):
    """Each controller names its own credentials Secret: three tokens, three blast radii."""

    CAPMOX = "capmox"
    CSI = "csi"
    CCM = "ccm"


class Scope(StrEnum):
    """Where a privilege is granted, independent of one tenant's names."""

    ROOT = "root"
    NODES = "nodes"
    TENANT_VMS = "tenant-vms"
    TEMPLATE = "template"
    CLONE_STORAGE = "clone-storage"
    ISO_STORAGE = "iso-storage"
    BRIDGE = "bridge"
    CSI_STORAGE = "csi-storage"


@dataclass(frozen=True)
class ScopeInfo:
    path: str
    meaning: str


SCOPES: Mapping[Scope, ScopeInfo] = {
    Scope.ROOT: ScopeInfo("/", "the cluster root, not propagated"),
    Scope.NODES: ScopeInfo("/nodes/<node>", "each of `allowedNodes` and every pool's `sourceNode`"),
    Scope.TENANT_VMS: ScopeInfo(
        "/pool/<pool>", "the tenant's resource pool, `proxmox.pool`; `/vms` when a node pool sets none"
    ),
    Scope.TEMPLATE: ScopeInfo("/vms/<template>", "the Talos template, or a pool holding only templates"),
    Scope.CLONE_STORAGE: ScopeInfo(
        "/storage/<storage>", "where worker disks land: `storage` with `full: true`, else the template's storage"
    ),
    Scope.ISO_STORAGE: ScopeInfo("/storage/<iso storage>", "a storage with `iso` content on the node"),
    Scope.BRIDGE: ScopeInfo(
        "/sdn/zones/localnetwork/<bridge>[/<vlan>]", "the worker NIC's `network.bridge` and `vlan`"
    ),
    Scope.CSI_STORAGE: ScopeInfo("/storage/<storage>", "each storage named by `csi.storageClasses`"),
}


@dataclass(frozen=True)
class Grant:
    """Privileges one controller needs at one scope, with the reason an operator reads."""

    scope: Scope
    privileges: tuple[str, ...]
    why: str


PRIVILEGE_TABLES: Mapping[Controller, tuple[Grant, ...]] = {
    Controller.CAPMOX: (
        Grant(Scope.ROOT, ("Sys.Audit",), "cluster status and the resource list the template lookup reads"),
        Grant(Scope.NODES, ("Sys.Audit",), "node status and memory for placing workers on `allowedNodes`"),
        Grant(
            Scope.TENANT_VMS,
            (
                "VM.Allocate", "VM.Audit", "VM.Clone", "VM.Config.CDROM", "VM.Config.CPU", "VM.Config.Cloudinit",
                "VM.Config.Disk", "VM.Config.HWType", "VM.Config.Memory", "VM.Config.Network",
                "VM.Config.Options", "VM.PowerMgmt",
            ),
            "pool-scoped VM admin: clone into the pool, size, attach the bootstrap ISO, power, delete",
        ),
        Grant(Scope.TEMPLATE, ("VM.Audit", "VM.Clone"), "template user: read and clone the Talos template"),
        Grant(Scope.CLONE_STORAGE, ("Datastore.AllocateSpace",), "datastore space for the worker disks"),
        Grant(
            Scope.ISO_STORAGE,
            ("Datastore.AllocateSpace", "Datastore.AllocateTemplate"),
            "datastore space for the bootstrap ISO capmox uploads per machine",
        ),
        Grant(Scope.BRIDGE, ("SDN.Use",), "attach the worker NIC to the bridge (PVE 8 and later)"),
    ),
    Controller.CSI: (
        Grant(Scope.TENANT_VMS, ("VM.Audit", "VM.Config.Disk"), "find a worker VM and hot-plug its volumes"),
        Grant(
            Scope.CSI_STORAGE,
            ("Datastore.Allocate", "Datastore.AllocateSpace", "Datastore.Audit"),
            "create, resize and delete the `vm-<controllerVmID>-pvc-…` volumes",
        ),
    ),
    Controller.CCM: (
        Grant(
            Scope.TENANT_VMS,
            ("VM.Audit", "VM.GuestAgent.Audit"),
            "find a Node's VM and its addresses; a VM it cannot see is reported gone and its Node deleted",
        ),
        Grant(Scope.NODES, ("Sys.Audit",), "node inventory for the region/zone topology labels"),
    ),
}

# Before PVE 9 the guest-agent privileges did not exist; VM.Monitor granted the same reads.
PVE8_EQUIVALENTS: Mapping[str, str] = {"VM.GuestAgent.Audit": "VM.Monitor"}


@dataclass(frozen=True)
class StandFacts:
    """What only the stand knows and the spec does not: the doctor fills it, documentation leaves it empty."""

    template_ids: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    """Per pool, the templates it clones (one per node under perNodeTemplates)."""
    template_storages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    iso_storages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Requirement:
    """One privilege at one path; `alternatives` are paths any one of which satisfies it."""

    controller: Controller
    scope: Scope
    alternatives: tuple[str, ...]
    privilege: str
    why: str

    @property
    def path(self) -> str:
        return " or ".join(self.alternatives)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _scope_paths(
    scope: Scope, tc: TenantCluster, pools: Sequence[NodePool], facts: StandFacts
) -> list[tuple[str, ...]]:
    """Each entry is one place the privilege is needed, given as its alternative paths."""
    px = tc.spec.proxmox
    pool_specs = [(p.metadata.name, p.spec.proxmox) for p in pools if p.spec.proxmox is not None]
    if scope is Scope.ROOT:
        return [("/",)]
    if scope is Scope.NODES:
        nodes = _unique([*(px.allowed_nodes if px else []), *(s.source_node for _, s in pool_specs)])
        return [(f"/nodes/{n}",) for n in nodes]
    if scope is Scope.TENANT_VMS:
        return [(p,) for p in _unique(f"/pool/{s.pool}" if s.pool else "/vms" for _, s in pool_specs)]
    if scope is Scope.TEMPLATE:
        unknown = "<template of {}>"
        return [
            (f"/vms/{vmid}",)
            for name, s in pool_specs
            for vmid in ((s.template_id,) if s.template_id else facts.template_ids.get(name) or (unknown.format(name),))
        ]
    if scope is Scope.CLONE_STORAGE:
        out: list[tuple[str, ...]] = []
        for name, s in pool_specs:
            stores = (s.storage,) if s.full and s.storage else facts.template_storages.get(name, ())
            out.extend((f"/storage/{st}",) for st in stores or (f"<template storage of {name}>",))
        return _unique_tuples(out)
    if scope is Scope.ISO_STORAGE:
        nodes = _unique([*(px.allowed_nodes if px else []), *(s.source_node for _, s in pool_specs)])
        return _unique_tuples(
            tuple(f"/storage/{st}" for st in facts.iso_storages.get(n, ())) or (f"<iso storage on {n}>",)
            for n in nodes
        )
    if scope is Scope.BRIDGE:
        return _unique_tuples(
            (f"/sdn/zones/localnetwork/{s.network.bridge}" + (f"/{s.network.vlan}" if s.network.vlan else ""),)
            for _, s in pool_specs
        )
    if px is None or not px.csi.enabled:
        return []
    return _unique_tuples((f"/storage/{sc.storage}",) for sc in px.csi.storage_classes)


def _unique_tuples(items: Iterable[tuple[str, ...]]) -> list[tuple[str, ...]]:
    return list(dict.fromkeys(items))


def requirements_for(
    tc: TenantCluster,
    pools: Sequence[NodePool],
    controllers: Iterable[Controller] = tuple(Controller),
    facts: StandFacts | None = None,
) -> list[Requirement]:
    """Every (controller, path, privilege) the spec implies; CSI needs nothing when `csi.enabled` is false."""
    known = facts or StandFacts()
    csi_off = tc.spec.proxmox is not None and not tc.spec.proxmox.csi.enabled
    out: list[Requirement] = []
    for controller in controllers:
        if controller is Controller.CSI and csi_off:
            continue
        for grant in PRIVILEGE_TABLES[controller]:
            for alternatives in _scope_paths(grant.scope, tc, pools, known):
                out.extend(Requirement(controller, grant.scope, alternatives, p, grant.why) for p in grant.privileges)
    return out


_CONTROLLER_TITLES: Mapping[Controller, str] = {
    Controller.CAPMOX: "capmox (cluster-api-provider-proxmox v0.7.7)",
    Controller.CSI: "CSI controller (proxmox-csi-plugin)",
    Controller.CCM: "cloud-controller-manager (proxmox-cloud-controller-manager, capmox mode)",
}

_SCOPE_TEXT = """\
### Per-tenant scope

Set `proxmox.pool` on every node pool. capmox clones each worker into that resource pool, replacements
included, so one ACL on `/pool/<pool>` follows every VM of the tenant without being granted again. Grant
the VM privileges of the three tokens at `/pool/<pool>` (propagate), never at `/`: a token holding
`VM.Config.Disk` or `Datastore.Allocate` on `/` reaches every VM and every volume of the Proxmox
cluster. Only `Sys.Audit` belongs on `/`, without propagation. A privilege-separated token holds what
both it and its user are granted, so grant the user as well as the token.

What that scope still leaves open:

- **The tenant's own disks.** The CSI driver checks neither the VM a node ID names nor the volume a
  handle names against the cluster it serves, so a static PersistentVolume naming another volume of the
  same pool's storage is attached, detached or deleted. A cluster-admin of the tenant could reach those
  disks anyway.
- **A storage shared with others.** `Datastore.Allocate` on `/storage/<id>` reaches every volume on that
  storage, whoever owns it. Give each tenant a storage of its own (a ZFS dataset, an LVM-thin pool) and
  name only it in `csi.storageClasses`.
"""


def render_privileges_markdown() -> str:
    """The README/docs section "Proxmox token privileges", generated so prose and the doctor cannot drift."""
    lines = [
        "## Proxmox token privileges",
        "",
        "Generated from `tenantctl.proxmox.privileges`; `tenantctl doctor proxmox` checks a token against",
        "the same data at the paths a spec implies. Paths in angle brackets are filled from the spec.",
        "",
    ]
    for controller, grants in PRIVILEGE_TABLES.items():
        lines += [f"### {_CONTROLLER_TITLES[controller]}", "", "| Path | Which | Privileges | Why |"]
        lines.append("|---|---|---|---|")
        for g in grants:
            info = SCOPES[g.scope]
            privs = ", ".join(f"`{p}`" for p in g.privileges)
            lines.append(f"| `{info.path}` | {info.meaning} | {privs} | {g.why} |")
        lines.append("")
    equivalents = ", ".join(f"`{new}` → `{old}`" for new, old in PVE8_EQUIVALENTS.items())
    lines += [f"On PVE 8 read {equivalents}.", "", _SCOPE_TEXT]
    return "\n".join(lines)
