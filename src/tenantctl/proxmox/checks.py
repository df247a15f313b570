"""The doctor's checks: a table of functions, each turning the spec and the stand into PASS/WARN/FAIL rows.

Every row says what was seen and what to do; the causes that kept an earlier attempt from ever booting
a VM (URL suffix, template selection, guest agent) and capmox v0.7.7's clone rules come first.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tenantctl.proxmox.client import API_SUFFIX, Target
from tenantctl.proxmox.inventory import Inventory, config_ips
from tenantctl.proxmox.privileges import PVE8_EQUIVALENTS, Controller, Requirement, StandFacts, requirements_for
from tenantctl.proxmox.report import Row, Status
from tenantctl.proxmox.storage import LINKED_CLONE, template_disks
from tenantctl.proxmox.templates import select_templates
from tenantctl.spec import NodePool, ProxmoxPoolSpec, TenantCluster
from tenantctl.spec.addresses import parse_address_entry
from tenantctl.spec.checks import pool_addresses
from tenantctl.spec.tenant import DEFAULT_SCHEMATIC_ID

__all__ = ["CHECKS", "Check", "CheckSpec", "Context", "holds", "resolve_template", "run_checks", "stand_facts"]

PASS, WARN, FAIL = Status.PASS, Status.WARN, Status.FAIL


@dataclass(frozen=True)
class Context:
    tenant: TenantCluster
    pools: tuple[NodePool, ...]
    target: Target
    inv: Inventory
    controllers: tuple[Controller, ...] = tuple(Controller)

    @property
    def proxmox_pools(self) -> list[tuple[str, ProxmoxPoolSpec]]:
        return [(p.metadata.name, p.spec.proxmox) for p in self.pools if p.spec.proxmox is not None]


Check = Callable[[Context], list[Row]]


def _unreadable(check: str, ctx: Context, key: str, subject: str) -> list[Row]:
    err = ctx.inv.errors.get(key)
    if err is None:
        return []
    return [Row(check, subject, WARN, f"could not read {key}: {err.message}", "grant the token Sys.Audit on / "
                "(and /nodes) so the doctor can see it, or check the row by hand")]


# ------------------------------------------------------------------ offline: URL and TLS


def check_url(ctx: Context) -> list[Row]:
    url = ctx.target.url
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    rows: list[Row] = []
    if path.endswith(API_SUFFIX):
        rows.append(Row("url", url, FAIL, f"the URL ends in {API_SUFFIX}",
                        f"drop {API_SUFFIX}: capmox appends it itself, so every call goes to "
                        f"{API_SUFFIX}{API_SUFFIX}/… and answers 501; use {parts.scheme}://{parts.netloc}"))
    elif path:
        rows.append(Row("url", url, FAIL, f"the URL has a path ({parts.path!r})",
                        f"give only scheme, host and port, e.g. https://{parts.netloc}"))
    if parts.scheme == "http" and not ctx.target.insecure:
        rows.append(Row("url", url, FAIL, "plain http while spec.proxmox.insecure is false",
                        f"use https://{parts.netloc} (Proxmox serves only HTTPS on 8006); "
                        "set insecure: true only for a stand with a self-signed certificate"))
    elif parts.scheme == "http":
        rows.append(Row("url", url, WARN, "plain http (spec.proxmox.insecure is true)",
                        "the token crosses the network unencrypted; prefer https"))
    elif parts.scheme != "https":
        rows.append(Row("url", url, FAIL, f"scheme {parts.scheme or '(none)'!r}", "use https://host:8006"))
    return rows or [Row("url", url, PASS, "https, no path: capmox can append /api2/json itself")]


def check_tls(ctx: Context) -> list[Row]:
    if ctx.target.insecure:
        return [Row("tls", ctx.target.url, WARN, "certificate not verified (spec.proxmox.insecure: true)",
                    "install a certificate your CA signs and set insecure: false")]
    source = f"CA file {ctx.target.ca_file}" if ctx.target.ca_file else "the system CA bundle"
    return [Row("tls", ctx.target.url, PASS, f"certificate verified against {source}")]


# ------------------------------------------------------------------ token and version


def check_auth(ctx: Context) -> list[Row]:
    err = ctx.inv.errors.get("version")
    if err is None:
        return [Row("auth", ctx.target.token_id, PASS, "the token authenticates (GET /version answered)")]
    if err.status == 401:
        advice = ("check the token id (user@realm!name), PROXMOX_TOKEN_SECRET and that the token is neither "
                  "expired nor deleted")
    elif err.status is None and "TLS" in err.message:
        advice = "pass --ca-file with the CA that signed the certificate, or set spec.proxmox.insecure: true"
    else:
        advice = "check that the URL reaches the Proxmox API (host, port 8006, firewall)"
    return [Row("auth", ctx.target.token_id, FAIL, err.message, advice)]


def check_version(ctx: Context) -> list[Row]:
    version = str((ctx.inv.version or {}).get("version", "?"))
    major = ctx.inv.pve_major
    if major >= 9:
        return [Row("version", f"PVE {version}", WARN, "PVE 9 replaced HA groups with HA rules",
                    "the CCM image v0.15.0 logs 'error get ha-groups 500' every five minutes; node "
                    "initialisation is unaffected")]
    if major < 8:
        return [Row("version", f"PVE {version}", WARN, "older than PVE 8",
                    "untested: SDN.Use and the privilege names in the tables assume PVE 8 or later")]
    return [Row("version", f"PVE {version}", PASS, "supported")]


# ------------------------------------------------------------------ nodes


def check_nodes(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    rows = _unreadable("nodes", ctx, "nodes", "/nodes")
    for node in px.allowed_nodes if px else []:
        rows.append(_node_row("nodes", f"allowedNodes: {node}", node, ctx.inv))
    for name, spec in ctx.proxmox_pools:
        rows.append(_node_row("nodes", f"NodePool/{name}.sourceNode: {spec.source_node}", spec.source_node, ctx.inv))
    return rows


def _node_row(check: str, subject: str, node: str, inv: Inventory) -> Row:
    status = inv.nodes.get(node)
    known = ", ".join(sorted(inv.nodes)) or "none visible"
    if status is None:
        return Row(check, subject, FAIL, f"no node {node!r} (nodes: {known})",
                   "use a node name from `pvecm nodes`; names are case-sensitive")
    if status != "online":
        return Row(check, subject, FAIL, f"node {node!r} is {status}",
                   "bring the node back or remove it from the spec: capmox places workers on it and waits")
    return Row(check, subject, PASS, f"node {node!r} is online")


# ------------------------------------------------------------------ templates


def resolve_template(spec: ProxmoxPoolSpec, inv: Inventory) -> Mapping[str, Any] | None:
    """The template capmox would clone for this pool, or None when it would fail."""
    if spec.template_id is not None:
        vm = inv.vm(spec.template_id)
        return vm if vm is not None and vm.get("template") and vm.get("node") == spec.source_node else None
    if spec.template_tags is None:
        return None
    exact = select_templates(spec.template_tags, inv.vms).exact
    return exact[0] if len(exact) == 1 else None


def _describe(vm: Mapping[str, Any]) -> str:
    return f"{vm.get('vmid')} {vm.get('name', '')!r} on {vm.get('node')} (tags {vm.get('tags', '')!r})"


def check_templates(ctx: Context) -> list[Row]:
    rows = _unreadable("template", ctx, "resources", "/cluster/resources")
    for name, spec in ctx.proxmox_pools:
        subject = f"NodePool/{name}"
        if spec.template_id is not None:
            rows.append(_template_id_row(subject, spec, ctx.inv))
        elif spec.template_tags is not None:
            rows.append(_template_tags_row(subject, spec.template_tags, ctx.inv))
    return rows


def _template_id_row(subject: str, spec: ProxmoxPoolSpec, inv: Inventory) -> Row:
    tid = spec.template_id
    vm = inv.vm(tid) if tid is not None else None
    if vm is None:
        return Row("template", subject, FAIL, f"templateID {tid} does not exist (or the token cannot see it)",
                   "create the Talos template with that VMID, or grant VM.Audit on it")
    if not vm.get("template"):
        return Row("template", subject, FAIL, f"VM {tid} {vm.get('name', '')!r} is not a template",
                   f"convert it with `qm template {tid}` (a linked clone needs a template's base volumes)")
    if vm.get("node") != spec.source_node:
        return Row("template", subject, FAIL,
                   f"template {tid} is on node {vm.get('node')}, not on sourceNode {spec.source_node}",
                   f"set sourceNode: {vm.get('node')} (capmox clones from sourceNode when templateID is set)")
    return Row("template", subject, PASS, f"templateID {tid} is a template on {spec.source_node}")


def _template_tags_row(subject: str, tags: Sequence[str], inv: Inventory) -> Row:
    sel = select_templates(tags, inv.vms)
    wanted = ";".join(sel.wanted)
    extra = "; ".join(
        f"not selected: {_describe(vm)} carries extra tags "
        f"{sorted(set(str(vm.get('tags', '')).split(';')) - set(sel.wanted))}"
        for vm in sel.supersets
    )
    if len(sel.exact) == 1:
        seen = f"capmox selects {_describe(sel.exact[0])}" + (f"; {extra}" if extra else "")
        return Row("template", subject, PASS, seen)
    if len(sel.exact) > 1:
        found = "; ".join(_describe(vm) for vm in sel.exact)
        return Row("template", subject, FAIL, f"found {len(sel.exact)} VM templates with tags {wanted!r}: {found}",
                   "matchTags must select exactly one template: keep a single copy on shared storage (any "
                   "allowed node can clone it), or give each copy its own extra tag and name it in templateTags")
    if sel.supersets:
        return Row("template", subject, FAIL, f"found 0 VM templates with tags {wanted!r}; {extra}",
                   "templateSelector.matchTags is set equality, not containment: list every tag of the "
                   "template in templateTags, or remove the extra tags from the template")
    templates = "; ".join(_describe(vm) for vm in inv.templates()[:5]) or "no templates visible"
    return Row("template", subject, FAIL, f"found 0 VM templates with tags {wanted!r} ({templates})",
               f"tag the Talos template exactly: `qm set <vmid> --tags '{wanted}'` and convert it with "
               "`qm template <vmid>`")


def check_placement(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    for name, spec in ctx.proxmox_pools:
        vm = resolve_template(spec, ctx.inv)
        if vm is not None:
            rows += _placement_rows(f"NodePool/{name}", spec, vm, ctx)
    return rows


def _placement_rows(subject: str, spec: ProxmoxPoolSpec, vm: Mapping[str, Any], ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    node = str(vm.get("node"))
    rows: list[Row] = []
    if spec.template_tags is not None and node != spec.source_node:
        rows.append(Row("placement", subject, WARN,
                        f"the selected template lives on {node}; sourceNode is {spec.source_node}",
                        f"capmox v0.7.7 clones from the template's node ({node}) and ignores sourceNode "
                        "with templateTags; set sourceNode to match to avoid confusion"))
    disks = template_disks(ctx.inv.configs.get(int(vm["vmid"]), {}))
    local = sorted({d.storage for d in disks if not ctx.inv.storages.get(d.storage, {}).get("shared")})
    others = [n for n in (px.allowed_nodes if px else []) if n != node]
    if local and others:
        rows.append(Row("placement", subject, FAIL,
                        f"template {vm.get('vmid')} is on local storage {', '.join(local)} of {node}, "
                        f"but allowedNodes also names {', '.join(others)}",
                        f"Proxmox refuses a clone to another node from local storage (\"can't clone VM to "
                        f"node ... (VM uses local storage)\"): move the template to shared storage, or "
                        f"set allowedNodes: [{node}]"))
    return rows or [Row("placement", subject, PASS, f"clones from {node} can reach every allowed node")]


def check_clone_storage(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    for name, spec in ctx.proxmox_pools:
        subject = f"NodePool/{name}"
        vm = resolve_template(spec, ctx.inv)
        if spec.full:
            rows.append(_full_clone_row(subject, spec, vm, ctx.inv))
            continue
        if vm is None:
            continue
        disks = template_disks(ctx.inv.configs.get(int(vm["vmid"]), {}))
        problems: list[str] = []
        for disk in disks:
            kind = str(ctx.inv.storages.get(disk.storage, {}).get("type", "unknown"))
            if not LINKED_CLONE.get(kind, False):
                problems.append(f"{disk.key} is on {disk.storage} (type {kind}), which cannot hold linked clones")
            elif not disk.is_base:
                problems.append(f"{disk.key} {disk.storage}:{disk.volume} is not a base volume")
        if problems:
            rows.append(Row("clone", subject, FAIL, f"full: false with template {vm.get('vmid')}: "
                            + "; ".join(problems),
                            "set full: true (and storage: an images storage on the node), or move the template "
                            "to a storage with linked clones (lvmthin, zfspool, rbd, dir/nfs) and run "
                            "`qm template` there"))
        else:
            stores = ", ".join(sorted({d.storage for d in disks})) or "no disks"
            rows.append(Row("clone", subject, PASS, f"linked clones from base volumes on {stores}"))
    return rows


def _full_clone_row(subject: str, spec: ProxmoxPoolSpec, vm: Mapping[str, Any] | None, inv: Inventory) -> Row:
    if spec.storage is None:
        return Row("clone", subject, PASS, "full clone onto the template's own storage")
    store = inv.storages.get(spec.storage)
    if store is None:
        return Row("clone", subject, FAIL, f"storage {spec.storage!r} does not exist "
                   f"(storages: {', '.join(sorted(inv.storages)) or 'none visible'})",
                   "name a storage from `pvesm status` with content `images`")
    if "images" not in str(store.get("content", "")).split(","):
        return Row("clone", subject, FAIL, f"storage {spec.storage!r} holds {store.get('content')!r}, not images",
                   f"add images content: `pvesm set {spec.storage} --content images,...`, or pick another")
    node = str(vm.get("node")) if vm else spec.source_node
    on_node = inv.node_storages.get(node, {}).get(spec.storage)
    if on_node is not None and not on_node.get("enabled", 1):
        return Row("clone", subject, FAIL, f"storage {spec.storage!r} is not enabled on {node}",
                   f"enable it for {node} (`pvesm set {spec.storage} --nodes ...`)")
    return Row("clone", subject, PASS, f"full clone onto {spec.storage} (images)")


def check_csi_storage(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    if px is None or not px.csi.enabled:
        return []
    rows: list[Row] = []
    for sc in px.csi.storage_classes:
        subject = f"StorageClass {sc.name}: {sc.storage}"
        store = ctx.inv.storages.get(sc.storage)
        if store is None:
            rows.append(Row("csi-storage", subject, FAIL, f"storage {sc.storage!r} does not exist or the token "
                            f"cannot audit it (storages: {', '.join(sorted(ctx.inv.storages)) or 'none visible'})",
                            "name a storage from `pvesm status` in csi.storageClasses"))
            continue
        if "images" not in str(store.get("content", "")).split(","):
            rows.append(Row("csi-storage", subject, FAIL, f"storage {sc.storage!r} holds {store.get('content')!r}",
                            f"the CSI driver allocates VM disks: `pvesm set {sc.storage} --content images,...`"))
            continue
        missing = [n for n in (px.allowed_nodes or []) if n in ctx.inv.node_storages
                   and not ctx.inv.node_storages[n].get(sc.storage, {}).get("enabled", 0)]
        if missing:
            rows.append(Row("csi-storage", subject, FAIL, f"storage {sc.storage!r} is not enabled on "
                            f"{', '.join(missing)}", "a volume is created on the worker's node: enable the storage "
                            "there or pick one every allowed node has"))
            continue
        rows.append(Row("csi-storage", subject, PASS,
                        f"{store.get('type')} storage with images on every allowed node"))
    return rows


# ------------------------------------------------------------------ pool, network


def check_pool(ctx: Context) -> list[Row]:
    rows = _unreadable("pool", ctx, "pools", "/pools")
    for name, spec in ctx.proxmox_pools:
        subject = f"NodePool/{name}"
        if spec.pool is None:
            rows.append(Row("pool", subject, WARN, "no proxmox.pool",
                            "without a pool every controller needs its privileges on /vms, i.e. on every VM "
                            "of the cluster; set pool: <tenant pool> for a per-tenant scope"))
        elif spec.pool in ctx.inv.pools:
            rows.append(Row("pool", subject, PASS, f"pool {spec.pool!r} exists"))
        else:
            rows.append(Row("pool", subject, FAIL, f"pool {spec.pool!r} does not exist or the token lacks "
                            "Pool.Audit on it", f"create it: `pveum pool add {spec.pool}`, then grant the tokens "
                            f"on /pool/{spec.pool}"))
    return rows


def check_bridges(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    px = ctx.tenant.spec.proxmox
    for name, spec in ctx.proxmox_pools:
        bridge, vlan = spec.network.bridge, spec.network.vlan
        for node in dict.fromkeys([*(px.allowed_nodes if px else []), spec.source_node]):
            if node not in ctx.inv.networks:
                continue
            ifaces = {str(i.get("iface")): i for i in ctx.inv.networks[node]}
            subject = f"NodePool/{name} on {node}"
            found = ifaces.get(bridge)
            if found is None or "bridge" not in str(found.get("type", "")).lower():
                bridges = ", ".join(sorted(k for k, v in ifaces.items() if "bridge" in str(v.get("type", "")).lower()))
                rows.append(Row("bridge", subject, FAIL,
                                f"no bridge {bridge!r} on {node} (bridges: {bridges or 'none'})",
                                f"create {bridge} on {node} or set network.bridge to one of its bridges"))
                continue
            note = ""
            if vlan is not None:
                aware = str(found.get("bridge_vlan_aware", "0")) in ("1", "true")
                note = f", vlan {vlan}" + ("" if aware else f" (not VLAN-aware: PVE creates {bridge}v{vlan})")
            rows.append(Row("bridge", subject, PASS, f"bridge {bridge} exists{note}"))
    return rows


# ------------------------------------------------------------------ IPAM


def _spec_addresses(tc: TenantCluster) -> list[ipaddress.IPv4Address]:
    px = tc.spec.proxmox
    out: list[ipaddress.IPv4Address] = []
    for entry in px.ipv4_config.addresses if px and px.ipv4_config else []:
        try:
            parsed = parse_address_entry(entry)
        except ValueError:
            continue
        out.extend(ipaddress.IPv4Address(i) for i in range(int(parsed.first), int(parsed.last) + 1))
    return out


def _used_addresses(inv: Inventory) -> dict[str, list[str]]:
    used: dict[str, list[str]] = {}
    for vm in inv.vms:
        vmid = int(vm["vmid"])
        for ip in {*config_ips(inv.configs.get(vmid, {})), *inv.agent_ips.get(vmid, [])}:
            used.setdefault(ip, []).append(f"VM {vmid} {vm.get('name', '')!r} on {vm.get('node')}")
    return used


def check_ipam(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    if px is None or px.ipv4_config is None:
        return []
    rows = _unreadable("ipam", ctx, "resources", "/cluster/resources")
    used = _used_addresses(ctx.inv)
    clashes = [(str(a), used[str(a)]) for a in _spec_addresses(ctx.tenant) if str(a) in used]
    for ip, owners in clashes:
        rows.append(Row("ipam", ip, FAIL, f"{ip} in ipv4Config.addresses is already used by {', '.join(owners)}",
                        "remove it from spec.proxmox.ipv4Config.addresses (CAIP would hand it to a worker and "
                        "both would answer ARP), or free it"))
    unasked = sorted(k.rsplit(" ", 1)[-1] for k in ctx.inv.errors if k.startswith("guest agent of VM"))
    if not clashes and unasked:
        rows.append(Row("ipam", "ipv4Config.addresses", WARN,
                        f"no clash among the {len(ctx.inv.vms)} VMs visible, but the guest agents of VMs "
                        f"{', '.join(unasked)} could not be asked",
                        "grant the doctor's token VM.GuestAgent.Audit on /vms to see their addresses"))
    elif not clashes:
        rows.append(Row("ipam", "ipv4Config.addresses", PASS,
                        f"none of the addresses is used by the {len(ctx.inv.vms)} VMs visible "
                        f"({len(ctx.inv.agent_ips)} answered through the guest agent)"))
    rows += _gateway_rows(ctx)
    rows += _capacity_rows(ctx, len(clashes))
    return rows


def _gateway_rows(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    assert px is not None and px.ipv4_config is not None
    cfg = px.ipv4_config
    try:
        subnet = ipaddress.IPv4Network(f"{cfg.gateway}/{cfg.prefix}", strict=False)
    except ValueError:
        return [Row("gateway", cfg.gateway, FAIL, f"gateway {cfg.gateway!r}/{cfg.prefix} is not an IPv4 address",
                    "set spec.proxmox.ipv4Config.gateway to the router of the workers' subnet")]
    outside = [str(a) for a in _spec_addresses(ctx.tenant) if a not in subnet]
    if outside:
        return [Row("gateway", cfg.gateway, FAIL, f"addresses {outside[:3]} are outside {subnet}",
                    "the gateway must be on-prefix for every worker address; fix prefix or gateway")]
    mismatched = []
    for name, spec in ctx.proxmox_pools:
        for node, ifaces in ctx.inv.networks.items():
            bridge = next((i for i in ifaces if i.get("iface") == spec.network.bridge), None)
            cidr = str((bridge or {}).get("cidr") or "")
            if cidr and not spec.network.vlan and ipaddress.ip_interface(cidr).network != subnet:
                mismatched.append(f"{spec.network.bridge} on {node} is {cidr} (NodePool/{name})")
    if mismatched:
        return [Row("gateway", cfg.gateway, WARN, f"the worker subnet is {subnet} but " + "; ".join(mismatched),
                    "check that the bridge carries the workers' subnet, or set network.vlan")]
    return [Row("gateway", cfg.gateway, PASS, f"on-prefix for every address ({subnet})")]


def _capacity_rows(ctx: Context, clashes: int) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    assert px is not None
    have = pool_addresses(px)
    if have is None:
        return []
    need = sum(p.spec.ceiling + p.spec.rolling_update.max_surge for p in ctx.pools)
    free = have - clashes
    status = PASS if need <= free else FAIL
    advice = "" if status is PASS else "add addresses to spec.proxmox.ipv4Config.addresses or shrink the pools"
    return [Row("capacity", "ipv4Config.addresses", status,
                f"{free} free of {have} usable; the pools can claim {need} at once (replicas + surge)", advice)]


# ------------------------------------------------------------------ privileges


def stand_facts(ctx: Context) -> StandFacts:
    """Fill the spec's blanks from the stand: the templates' ids and storages, the ISO storages per node."""
    ids: dict[str, int] = {}
    stores: dict[str, tuple[str, ...]] = {}
    for name, spec in ctx.proxmox_pools:
        vm = resolve_template(spec, ctx.inv)
        if vm is not None:
            ids[name] = int(vm["vmid"])
            stores[name] = tuple(dict.fromkeys(d.storage for d in template_disks(ctx.inv.configs.get(ids[name], {}))))
    iso = {
        node: tuple(s for s, info in sorted(st.items()) if "iso" in str(info.get("content", "")).split(","))
        for node, st in ctx.inv.node_storages.items()
    }
    return StandFacts(template_ids=ids, template_storages=stores, iso_storages=iso)


def _ancestors(path: str) -> list[str]:
    parts = [p for p in path.split("/") if p]
    return ["/" + "/".join(parts[:i]) for i in range(len(parts), 0, -1)] + ["/"]


def holds(inv: Inventory, path: str, privilege: str) -> bool:
    """Whether the token holds `privilege` at `path`, by inheritance from a parent path or a VM's pool."""
    candidates = _ancestors(path)
    if path.startswith("/vms/"):
        vm = inv.vm(int(path.split("/")[2])) if path.split("/")[2].isdigit() else None
        if vm and vm.get("pool"):
            candidates.append(f"/pool/{vm['pool']}")
    wanted = {privilege}
    if inv.pve_major < 9 and privilege in PVE8_EQUIVALENTS:
        wanted.add(PVE8_EQUIVALENTS[privilege])
    return any(wanted & inv.permissions.get(c, set()) for c in candidates)


def check_privileges(ctx: Context) -> list[Row]:
    if "permissions" in ctx.inv.errors:
        return [Row("privileges", ctx.target.token_id, WARN,
                    f"could not read /access/permissions: {ctx.inv.errors['permissions'].message}",
                    "compare the token's roles with docs/proxmox-privileges.md by hand")]
    reqs = requirements_for(ctx.tenant, ctx.pools, ctx.controllers, stand_facts(ctx))
    missing: dict[tuple[Controller, str], list[Requirement]] = {}
    for req in reqs:
        if not any(holds(ctx.inv, alt, req.privilege) for alt in req.alternatives):
            missing.setdefault((req.controller, req.path), []).append(req)
    rows: list[Row] = []
    for controller in ctx.controllers:
        gaps = {path: rs for (c, path), rs in missing.items() if c is controller}
        for path, rs in gaps.items():
            privs = ",".join(r.privilege for r in rs)
            rows.append(Row("privileges", f"{controller} at {path}", FAIL,
                            f"{ctx.target.token_id} lacks {privs} ({rs[0].why})",
                            f"pveum role add tenantctl-{controller} --privs '{privs}' (or extend it), then "
                            f"pveum acl modify {rs[0].alternatives[0]} --tokens '{ctx.target.token_id}' "
                            f"--roles tenantctl-{controller}; a privilege-separated token also needs the "
                            "grant on its user"))
        if not gaps:
            count = sum(1 for r in reqs if r.controller is controller)
            if count:
                rows.append(Row("privileges", str(controller), PASS, f"all {count} privileges held"))
    return rows


# ------------------------------------------------------------------ Talos


def _agent_flag(config: Mapping[str, Any]) -> bool:
    first = str(config.get("agent", "0")).split(",")[0]
    return first.split("=")[-1] in ("1", "true", "on")


def check_talos(ctx: Context) -> list[Row]:
    rows = [Row("talos", "ProxmoxMachineTemplate.spec.checks", PASS,
                "tenantctl renders skipQemuGuestAgent and skipCloudInitStatus: true",
                "keep them if you edit the render: capmox otherwise waits for a qemu-guest-agent Talos "
                "does not ship (\"error waiting for agent: timed out\")")]
    vanilla = ctx.tenant.spec.talos.schematic_id == DEFAULT_SCHEMATIC_ID
    for name, spec in ctx.proxmox_pools:
        vm = resolve_template(spec, ctx.inv)
        if vm is None or not _agent_flag(ctx.inv.configs.get(int(vm["vmid"]), {})):
            continue
        if vanilla:
            rows.append(Row("talos", f"NodePool/{name}", WARN,
                            f"template {vm.get('vmid')} sets agent: 1 but spec.talos.schematicID is the vanilla "
                            "schematic (no qemu-guest-agent extension)",
                            "add siderolabs/qemu-guest-agent to the Image Factory schematic, or set agent: 0 on "
                            "the template (shutdowns otherwise wait for an agent that never answers)"))
        else:
            rows.append(Row("talos", f"NodePool/{name}", PASS,
                            f"template {vm.get('vmid')} sets agent: 1 with a custom schematic",
                            "make sure the schematic includes siderolabs/qemu-guest-agent"))
    return rows


@dataclass(frozen=True)
class CheckSpec:
    name: str
    run: Check
    needs_api: bool


CHECKS: tuple[CheckSpec, ...] = (
    CheckSpec("url", check_url, False),
    CheckSpec("tls", check_tls, False),
    CheckSpec("auth", check_auth, False),
    CheckSpec("version", check_version, True),
    CheckSpec("nodes", check_nodes, True),
    CheckSpec("template", check_templates, True),
    CheckSpec("placement", check_placement, True),
    CheckSpec("clone", check_clone_storage, True),
    CheckSpec("csi-storage", check_csi_storage, True),
    CheckSpec("pool", check_pool, True),
    CheckSpec("bridge", check_bridges, True),
    CheckSpec("ipam", check_ipam, True),
    CheckSpec("privileges", check_privileges, True),
    CheckSpec("talos", check_talos, False),
)


def run_checks(ctx: Context, checks: Iterable[CheckSpec] = CHECKS) -> list[Row]:
    """Every check in table order; the API checks only when the token authenticated."""
    return [row for c in checks if ctx.inv.authenticated or not c.needs_api for row in c.run(ctx)]
