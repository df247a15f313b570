"""Render changes that replace a live pool's machine template, as data: what each release changed, and the
pool as the render before it saw it.

A machine template is named by its content, so a release that renders one differently renames it and
the MachineDeployment rolls. On a live pool the operator keeps the template the pool runs (rendering it
at the newest level whose template is the live one) until the pool rolls for a reason of its own; then
every change of this table reaches it at once. CHANGES.md says when each came and why.

A level that fixes a template which could never produce a machine is `kept=False`: a pool it applies to
is never held below it, since keeping would keep a pool that cannot create a worker. It rolls once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.spec import NodePool

__all__ = ["CURRENT_LEVEL", "LEVELS", "RenderLevel", "pool_at_level", "unkept_above"]


@dataclass(frozen=True)
class RenderLevel:
    level: int
    since: str
    """The release that brought it (a commit of hack/compat/releases.txt; CHANGES.md has its entry)."""
    change: str
    before: Callable[[NodePool], NodePool]
    """The pool, as rendered before this level: the same spec with the change turned off."""
    kept: bool = True
    """False: the render before this level cannot produce a machine, so no pool is held below it."""
    applies: Callable[[NodePool], bool] = lambda _pool: True
    """Which pools the change touches (an unkept level rolls only these)."""
    marks: Callable[[Mapping[str, Any]], bool] = lambda _template: False
    """An unkept level: whether a live machine template was rendered before it (then the pool rolls once,
    and is told why; a pool rolling for a change of its own is not told about this level)."""


def _without_owner_tags(pool: NodePool) -> NodePool:
    px = pool.spec.proxmox
    if px is None or not px.owner_tags:
        return pool
    return pool.model_copy(update={"spec": pool.spec.model_copy(update={
        "proxmox": px.model_copy(update={"owner_tags": False})})})


def _selects_by_tags(pool: NodePool) -> bool:
    px = pool.spec.proxmox
    return px is not None and px.template_tags is not None


def _source_node_beside_selector(template: Mapping[str, Any]) -> bool:
    machine = ((template.get("spec") or {}).get("template") or {}).get("spec") or {}
    return "sourceNode" in machine and "templateSelector" in machine


LEVELS: tuple[RenderLevel, ...] = (
    RenderLevel(1, "3c5c6f1", "owner tags on every VM (tenantctl, tenant.<namespace>.<cluster>, nodepool.<pool>)",
                _without_owner_tags),
    # The render before it wrote sourceNode beside templateSelector: every ProxmoxMachine Cluster API cloned
    # from that template was refused by capmox's CRD, so it never made a worker. Nothing to keep: `before`
    # is the pool as it is, since no level below is ever rendered for a pool this applies to.
    RenderLevel(2, "Unreleased", "sourceNode left out beside templateSelector: capmox v0.7.7's ProxmoxMachine CRD "
                "refuses the two together, so no machine could be cloned from the template",
                lambda pool: pool, kept=False, applies=_selects_by_tags, marks=_source_node_beside_selector),
)
CURRENT_LEVEL = max(row.level for row in LEVELS)


def pool_at_level(pool: NodePool, level: int) -> NodePool:
    """The pool as a render of `level` saw it: every later level's change turned off, newest first."""
    for row in sorted(LEVELS, key=lambda r: r.level, reverse=True):
        if row.level > level:
            pool = row.before(pool)
    return pool


def unkept_above(pool: NodePool, level: int) -> RenderLevel | None:
    """The newest level above `level` that is never kept and touches `pool`: holding the pool at `level`
    would keep a template that cannot produce a machine (None: holding it there is sound)."""
    found = [row for row in LEVELS if row.level > level and not row.kept and row.applies(pool)]
    return max(found, key=lambda r: r.level) if found else None
