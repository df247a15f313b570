"""What capmox v0.7.7 needs to clone a worker: nodes, the template, where the disks can go."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.proxmox.checks._context import (
    FAIL,
    PASS,
    WARN,
    Context,
    describe,
    pool_templates,
    template_nodes,
    unreadable,
)
from tenantctl.proxmox.inventory import Inventory
from tenantctl.proxmox.report import Row
from tenantctl.proxmox.storage import LINKED_CLONE, template_disks
from tenantctl.proxmox.templates import select_templates, selector_tags
from tenantctl.render.proxmox import template_match_tags
from tenantctl.spec import NodePool, ProxmoxPoolSpec
from tenantctl.spec.placement import pool_nodes

# ------------------------------------------------------------------ nodes


def check_nodes(ctx: Context) -> list[Row]:
    px = ctx.tenant.spec.proxmox
    rows = unreadable("nodes", ctx, "nodes", "/nodes")
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


def check_templates(ctx: Context) -> list[Row]:
    rows = unreadable("template", ctx, "resources", "/cluster/resources")
    for pool in ctx.pools:
        spec = pool.spec.proxmox
        if spec is None:
            continue
        subject = f"NodePool/{pool.metadata.name}"
        if spec.template_id is not None:
            rows.append(_template_id_row(subject, spec, ctx.inv))
        elif spec.template_tags is not None:
            for node in template_nodes(pool, ctx.tenant):
                tags = template_match_tags(spec.template_tags, ctx.tenant.spec.talos.version, node)
                if node is None:
                    rows.append(_template_tags_row(subject, tags, ctx.inv))
                else:
                    rows.append(_node_template_row(f"{subject} on {node}", node, tags, ctx.inv))
    return rows


def _node_template_row(subject: str, node: str, tags: Sequence[str], inv: Inventory) -> Row:
    """perNodeTemplates: the group pinned to `node` clones the copy tagged for it, which must live there."""
    row = _template_tags_row(subject, tags, inv)
    if row.status is not PASS:
        if "found 0 VM templates" in row.seen:
            wanted = ";".join(selector_tags(tags))
            return Row("template", subject, FAIL, f"no template for node {node}: {row.seen}",
                       f"put a Talos template on {node}'s storage tagged exactly '{wanted}' "
                       f"(`qm set <vmid> --tags '{wanted}'`, `qm template <vmid>`); its node group clones only it")
        return row
    vm = select_templates(tags, inv.vms).exact[0]
    if str(vm.get("node")) != node:
        return Row("template", subject, FAIL, f"the copy tagged for {node} is {describe(vm)}",
                   f"move it to {node}, or retag it for {vm.get('node')}: a node group clones on its own node")
    return row


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
        f"not selected: {describe(vm)} carries extra tags "
        f"{sorted(set(str(vm.get('tags', '')).split(';')) - set(sel.wanted))}"
        for vm in sel.supersets
    )
    if len(sel.exact) == 1:
        seen = f"capmox selects {describe(sel.exact[0])}" + (f"; {extra}" if extra else "")
        return Row("template", subject, PASS, seen)
    if len(sel.exact) > 1:
        found = "; ".join(describe(vm) for vm in sel.exact)
        return Row("template", subject, FAIL, f"found {len(sel.exact)} VM templates with tags {wanted!r}: {found}",
                   "matchTags must select exactly one template: keep a single copy on shared storage (any "
                   "allowed node can clone it), or give each copy its own extra tag and name it in templateTags")
    if sel.supersets:
        return Row("template", subject, FAIL, f"found 0 VM templates with tags {wanted!r}; {extra}",
                   "templateSelector.matchTags is set equality, not containment: list every tag of the "
                   "template in templateTags, or remove the extra tags from the template")
    templates = "; ".join(describe(vm) for vm in inv.templates()[:5]) or "no templates visible"
    return Row("template", subject, FAIL, f"found 0 VM templates with tags {wanted!r} ({templates})",
               f"tag the Talos template exactly: `qm set <vmid> --tags '{wanted}'` and convert it with "
               "`qm template <vmid>`")


def check_placement(ctx: Context) -> list[Row]:
    rows: list[Row] = []
    for pool, group_node, vm in pool_templates(ctx):
        spec = pool.spec.proxmox
        assert spec is not None
        # A group cloning its own node's copy never leaves that node.
        targets = [group_node] if group_node is not None else pool_nodes(pool, ctx.tenant)
        subject = f"NodePool/{pool.metadata.name}" + (f" on {group_node}" if group_node else "")
        rows += _placement_rows(subject, spec, vm, targets, ctx, per_node=group_node is not None)
    return rows


def _placement_rows(
    subject: str,
    spec: ProxmoxPoolSpec,
    vm: Mapping[str, Any],
    targets: Sequence[str],
    ctx: Context,
    per_node: bool = False,
) -> list[Row]:
    """`per_node`: a group's own copy, which lives on another node than sourceNode by design."""
    node = str(vm.get("node"))
    rows: list[Row] = []
    if spec.template_tags is not None and node != spec.source_node and not per_node:
        rows.append(Row("placement", subject, WARN,
                        f"the selected template lives on {node}; sourceNode is {spec.source_node}",
                        f"capmox v0.7.7 clones from the template's node ({node}) and ignores sourceNode "
                        "with templateTags; set sourceNode to match to avoid confusion"))
    disks = template_disks(ctx.inv.configs.get(int(vm["vmid"]), {}))
    local = sorted({d.storage for d in disks if not ctx.inv.storages.get(d.storage, {}).get("shared")})
    others = [n for n in targets if n != node]
    if local and others:
        rows.append(Row("placement", subject, FAIL,
                        f"template {vm.get('vmid')} is on local storage {', '.join(local)} of {node}, "
                        f"but allowedNodes also names {', '.join(others)}",
                        f"Proxmox refuses a clone to another node from local storage (\"can't clone VM to "
                        f"node ... (VM uses local storage)\"): move the template to shared storage, put a copy "
                        f"on every node and set placement: spread with perNodeTemplates: true, or set the "
                        f"pool's allowedNodes: [{node}]"))
    return rows or [Row("placement", subject, PASS, f"clones from {node} can reach every allowed node")]


def check_clone_storage(ctx: Context) -> list[Row]:
    """Per template a pool clones (each node's copy under perNodeTemplates)."""
    rows: list[Row] = []
    for pool, node, vm in _templates_or_none(ctx):
        spec = pool.spec.proxmox
        assert spec is not None
        subject = f"NodePool/{pool.metadata.name}" + (f" on {node}" if node else "")
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


def _templates_or_none(ctx: Context) -> list[tuple[NodePool, str | None, Mapping[str, Any] | None]]:
    """Each pool's templates as `pool_templates` resolves them, and (pool, None, None) for a pool whose
    template does not resolve (a full clone's target storage is still checked)."""
    found = pool_templates(ctx)
    resolved = {p.metadata.name for p, _, _ in found}
    missing = [(p, None, None) for p in ctx.pools if p.spec.proxmox is not None and p.metadata.name not in resolved]
    return [*found, *missing]


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
