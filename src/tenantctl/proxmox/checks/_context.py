"""What every check reads: the spec, the target and the stand, plus the template capmox would pick."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.proxmox.client import Target
from tenantctl.proxmox.inventory import Inventory
from tenantctl.proxmox.privileges import Controller
from tenantctl.proxmox.report import Row, Status
from tenantctl.proxmox.templates import select_templates
from tenantctl.render.proxmox import template_match_tags
from tenantctl.spec import NodePool, ProxmoxPoolSpec, TenantCluster
from tenantctl.spec.placement import node_groups

__all__ = [
    "FAIL", "PASS", "WARN", "Context", "describe", "pool_templates", "resolve_template", "template_nodes", "unreadable",
]

PASS, WARN, FAIL = Status.PASS, Status.WARN, Status.FAIL


@dataclass(frozen=True)
class Context:
    """One doctor run's inputs; `controllers` limits the privilege rows to the tokens being checked."""

    tenant: TenantCluster
    pools: tuple[NodePool, ...]
    target: Target
    inv: Inventory
    controllers: tuple[Controller, ...] = tuple(Controller)

    @property
    def proxmox_pools(self) -> list[tuple[str, ProxmoxPoolSpec]]:
        return [(p.metadata.name, p.spec.proxmox) for p in self.pools if p.spec.proxmox is not None]


def unreadable(check: str, ctx: Context, key: str, subject: str) -> list[Row]:
    """A WARN row when the stand could not be read for this check, so a blind PASS never appears."""
    err = ctx.inv.errors.get(key)
    if err is None:
        return []
    return [Row(check, subject, WARN, f"could not read {key}: {err.message}", "grant the token Sys.Audit on / "
                "(and /nodes) so the doctor can see it, or check the row by hand")]


def resolve_template(
    spec: ProxmoxPoolSpec, inv: Inventory, talos_version: str, node: str | None = None
) -> Mapping[str, Any] | None:
    """The template capmox would clone for this pool (at `talos_version`; `node`: a spread group's own copy
    under perNodeTemplates), or None when it would fail."""
    if spec.template_id is not None:
        vm = inv.vm(spec.template_id)
        return vm if vm is not None and vm.get("template") and vm.get("node") == spec.source_node else None
    if spec.template_tags is None:
        return None
    exact = select_templates(template_match_tags(spec.template_tags, talos_version, node), inv.vms).exact
    return exact[0] if len(exact) == 1 else None


def template_nodes(pool: NodePool, tc: TenantCluster) -> list[str | None]:
    """Whose copy of the template each node group clones: its own node's under perNodeTemplates, else the
    pool's one template (None)."""
    px = pool.spec.proxmox
    if px is None or not px.per_node_templates or px.placement != "spread":
        return [None]
    return [g.node for g in node_groups(pool, tc)]


def pool_templates(ctx: Context) -> list[tuple[NodePool, str | None, Mapping[str, Any]]]:
    """(pool, group node or None, the template it clones) for every template the doctor can resolve."""
    out: list[tuple[NodePool, str | None, Mapping[str, Any]]] = []
    for pool in ctx.pools:
        px = pool.spec.proxmox
        if px is None:
            continue
        for node in template_nodes(pool, ctx.tenant):
            vm = resolve_template(px, ctx.inv, ctx.tenant.spec.talos.version, node)
            if vm is not None:
                out.append((pool, node, vm))
    return out


def describe(vm: Mapping[str, Any]) -> str:
    """A VM as an operator finds it in the UI: id, name, node and tags."""
    return f"{vm.get('vmid')} {vm.get('name', '')!r} on {vm.get('node')} (tags {vm.get('tags', '')!r})"
