"""Render changes that replace a live pool's machine template, as data: what each release changed, and the
pool as the render before it saw it.

A machine template is named by its content, so a release that renders one differently renames it and
the MachineDeployment rolls. On a live pool the operator keeps the template the pool runs (rendering it
at the newest level whose template is the live one) until the pool rolls for a reason of its own; then
every change of this table reaches it at once. CHANGES.md says when each came and why.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tenantctl.spec import NodePool

__all__ = ["CURRENT_LEVEL", "LEVELS", "RenderLevel", "pool_at_level"]


@dataclass(frozen=True)
class RenderLevel:
    level: int
    since: str
    """The release that brought it (a commit of hack/compat/releases.txt; CHANGES.md has its entry)."""
    change: str
    before: Callable[[NodePool], NodePool]
    """The pool, as rendered before this level: the same spec with the change turned off."""


def _without_owner_tags(pool: NodePool) -> NodePool:
    px = pool.spec.proxmox
    if px is None or not px.owner_tags:
        return pool
    return pool.model_copy(update={"spec": pool.spec.model_copy(update={
        "proxmox": px.model_copy(update={"owner_tags": False})})})


LEVELS: tuple[RenderLevel, ...] = (
    RenderLevel(1, "3c5c6f1", "owner tags on every VM (tenantctl, tenant.<namespace>.<cluster>, nodepool.<pool>)",
                _without_owner_tags),
)
CURRENT_LEVEL = max(row.level for row in LEVELS)


def pool_at_level(pool: NodePool, level: int) -> NodePool:
    """The pool as a render of `level` saw it: every later level's change turned off, newest first."""
    for row in sorted(LEVELS, key=lambda r: r.level, reverse=True):
        if row.level > level:
            pool = row.before(pool)
    return pool
