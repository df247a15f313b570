"""What a live tenant keeps across a tenantctl upgrade: the Kubernetes patch it runs, and the machine
templates its pools run, until its policy or a change of its own moves them.

Both the operator's pass and `plan` (so `plan --against-release` says what the operator will do) read
the live objects and call these; the render stays a pure function of what they hand it.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.render.levels import CURRENT_LEVEL, LEVELS, pool_at_level, unkept_above
from tenantctl.render.meta import POOL_LABEL
from tenantctl.spec import NodePool, TenantCluster
from tenantctl.spec.patch_policy import PatchChoice, PatchUpgrades, choose_patch, patch_policy

__all__ = [
    "KeptTemplates", "effective_version", "keep_live_templates", "live_refs", "pool_of", "swap_pools", "template_refs",
]

Obj = dict[str, Any]


def effective_version(cluster: TenantCluster, running: str | None, platform_policy: PatchUpgrades | None,
                      now: datetime.datetime) -> tuple[TenantCluster, PatchChoice]:
    """The cluster with `spec.version` the patch its policy allows now, and the choice (what waits, why).

    A bare minor names the table's patch for a new tenant; a live one keeps what its control plane runs
    until its policy moves it (spec.patch_policy)."""
    policy, source = patch_policy(cluster.spec.patch_upgrades, platform_policy)
    choice = choose_patch(cluster.spec.version, running, policy, source, now)
    if choice.version == cluster.spec.version:
        return cluster, choice
    return cluster.model_copy(update={"spec": cluster.spec.model_copy(update={"version": choice.version})}), choice


def pool_of(obj: Mapping[str, Any]) -> str | None:
    """The pool a rendered or live object belongs to (its `tenantctl.io/nodepool` label), None if none."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    value = labels.get(POOL_LABEL)
    return str(value) if value is not None else None


def swap_pools(objects: Sequence[Obj], pools: set[str], replacement: Sequence[Obj]) -> list[Obj]:
    """`objects` with the pools' own objects replaced by `replacement`'s, in the apply order `objects` gives."""
    swapped: list[Obj] = []
    placed: set[str] = set()
    for obj in objects:
        owner = pool_of(obj)
        if owner is None or owner not in pools:
            swapped.append(obj)
        elif owner not in placed:
            placed.add(owner)
            swapped += [o for o in replacement if pool_of(o) == owner]
    return swapped


def template_refs(md: Mapping[str, Any]) -> tuple[str, str, str]:
    """What names a MachineDeployment's machines: a change of any one rolls them."""
    template = ((md.get("spec") or {}).get("template") or {}).get("spec") or {}
    infrastructure = template.get("infrastructureRef") or {}
    bootstrap = (template.get("bootstrap") or {}).get("configRef") or {}
    return str(template.get("version")), str(infrastructure.get("name")), str(bootstrap.get("name"))


def live_refs(deployments: Sequence[Mapping[str, Any]]) -> dict[str, tuple[str, str, str]]:
    return {str((md.get("metadata") or {}).get("name")): template_refs(md) for md in deployments}


@dataclass(frozen=True)
class KeptTemplates:
    objects: list[Obj]
    waiting: tuple[str, ...]
    """Per pool kept at an earlier level: the render changes that wait for its next roll."""
    rolling: tuple[str, ...] = ()
    """Per pool that rolls although its spec did not change: why its live template cannot be kept."""


def keep_live_templates(
    pools: Sequence[NodePool],
    objects: list[Obj],
    live_deployments: Sequence[Mapping[str, Any]],
    render_pool: Callable[[str, Sequence[NodePool]], list[Obj]],
    live_templates: Mapping[str, Mapping[str, Any]],
) -> KeptTemplates:
    """A live pool whose machine template only this release's render changes keeps the one it runs.

    The pool is rendered (`render_pool(name, pools)`) at the newest earlier level (render.levels) whose
    MachineDeployments name the templates the live ones do; if none does, the spec changed what the
    machines are, the pool rolls anyway, and it takes every change at once. A live machine template
    (`live_templates`, by name) rendered before a level that is never kept (`render.levels.unkept_above`)
    could make no machine: its pool rolls once, and `rolling` says why.
    """
    live = live_refs(live_deployments)
    waiting: list[str] = []
    rolling: list[str] = []
    for pool in pools:
        name = pool.metadata.name
        mds = [o for o in objects if o.get("kind") == "MachineDeployment" and pool_of(o) == name]
        if not mds or any(o["metadata"]["name"] not in live for o in mds):
            continue
        if all(template_refs(o) == live[o["metadata"]["name"]] for o in mds):
            continue
        for level in range(CURRENT_LEVEL - 1, -1, -1):
            unkept = unkept_above(pool, level)
            if unkept is not None and any(unkept.marks(live_templates.get(live[o["metadata"]["name"]][1]) or {})
                                          for o in mds):
                rolling.append(f"pool {name} rolls once: {unkept.change} (since {unkept.since}); its live "
                               "machine template is not kept")
                break
            at_level = [pool_at_level(p, level) if p.metadata.name == name else p for p in pools]
            old = [o for o in render_pool(name, at_level) if pool_of(o) == name]
            old_mds = [o for o in old if o.get("kind") == "MachineDeployment"]
            if old_mds and all(live.get(o["metadata"]["name"]) == template_refs(o) for o in old_mds):
                objects = swap_pools(objects, {name}, old)
                changes = "; ".join(f"{row.change} (since {row.since})" for row in LEVELS
                                    if row.level > level and row.applies(pool))
                waiting.append(f"pool {name} keeps its machine template until it rolls for a change of its own: "
                               f"{changes}")
                break
    return KeptTemplates(objects, tuple(waiting), tuple(rolling))
