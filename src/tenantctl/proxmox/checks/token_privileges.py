"""The token's privileges against the per-controller tables, at the paths the spec implies."""

from __future__ import annotations

from tenantctl.proxmox.checks._context import FAIL, PASS, WARN, Context, pool_templates
from tenantctl.proxmox.inventory import Inventory
from tenantctl.proxmox.privileges import PVE8_EQUIVALENTS, Controller, Requirement, StandFacts, requirements_for
from tenantctl.proxmox.report import Row
from tenantctl.proxmox.storage import template_disks


def stand_facts(ctx: Context) -> StandFacts:
    """Fill the spec's blanks from the stand: the templates' ids and storages, the ISO storages per node."""
    ids: dict[str, tuple[int, ...]] = {}
    stores: dict[str, tuple[str, ...]] = {}
    for pool, _, vm in pool_templates(ctx):
        name, vmid = pool.metadata.name, int(vm["vmid"])
        ids[name] = (*ids.get(name, ()), vmid)
        disks = template_disks(ctx.inv.configs.get(vmid, {}))
        stores[name] = tuple(dict.fromkeys([*stores.get(name, ()), *(d.storage for d in disks)]))
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


def _unresolved(req: Requirement) -> bool:
    """A path the stand could not fill in (the template did not resolve): nothing to compare with."""
    return all("<" in alt for alt in req.alternatives)


def check_privileges(ctx: Context) -> list[Row]:
    if "permissions" in ctx.inv.errors:
        return [Row("privileges", ctx.target.token_id, WARN,
                    f"could not read /access/permissions: {ctx.inv.errors['permissions'].message}",
                    "compare the token's roles with docs/proxmox-privileges.md by hand")]
    reqs = requirements_for(ctx.tenant, ctx.pools, ctx.controllers, stand_facts(ctx))
    missing: dict[tuple[Controller, str], list[Requirement]] = {}
    unknown: dict[tuple[Controller, str], list[Requirement]] = {}
    for req in reqs:
        if _unresolved(req):
            unknown.setdefault((req.controller, req.path), []).append(req)
        elif not any(holds(ctx.inv, alt, req.privilege) for alt in req.alternatives):
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
        for (c, path), rs in unknown.items():
            if c is controller:
                rows.append(Row("privileges", f"{controller} at {path}", WARN,
                                f"not checked: the stand does not say where {', '.join(r.privilege for r in rs)} "
                                "would be needed", "fix the template row first, then run again"))
        if not gaps and not any(c is controller for c, _ in unknown):
            count = sum(1 for r in reqs if r.controller is controller)
            if count:
                rows.append(Row("privileges", str(controller), PASS, f"all {count} privileges held"))
    return rows
