"""The render-and-apply phases of a pass: the tenant's objects, rendered at the versions each part may
run, applied and pruned; then the sources of its add-on charts.

The render is skipped when its inputs (`render_inputs`, a digest of everything it reads) equal those of the
last verified pass and the inventory is as that pass left it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.operator.phases.apply import ApplyResult, apply_inventory, apply_shared, still_verified
from tenantctl.operator.phases.conditions import Reason
from tenantctl.operator.phases.derived import DerivedJudge
from tenantctl.operator.phases.live_pins import keep_live_templates, live_refs, pool_of, swap_pools
from tenantctl.operator.phases.scope import Obj, Scope
from tenantctl.operator.phases.upgrade import Versions
from tenantctl.render import Names, render_cluster
from tenantctl.render.chart_sources import ChartSourcesSpec, render_chart_sources
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.levels import LEVELS
from tenantctl.render.restore import hold_for_restore
from tenantctl.render.tenant import charts_used
from tenantctl.spec import NodePool, ObservedState, TenantCluster

__all__ = ["apply", "chart_sources", "render", "render_inputs"]


async def apply(scope: Scope) -> None:
    """Render and apply, unless the last verified pass had these inputs and the inventory is as it saw it."""
    scope.applied = await _applied(scope)


async def _applied(scope: Scope) -> ApplyResult:
    assert scope.cluster is not None and scope.observation is not None
    cluster, namespace = scope.cluster.metadata.name, scope.cluster.metadata.namespace
    previous_kinds, keep = scope.current_status.get("inventory") or [], _kept(scope)
    scope.live_templates = await _live_templates(scope)
    inputs = render_inputs(scope, previous_kinds, keep)
    if await still_verified(scope.api, scope.verified, inputs, cluster=cluster, namespace=namespace):
        assert scope.verified is not None
        # The same inputs, live machine templates included, keep what the verified pass found waiting.
        scope.waiting_for_roll = tuple((scope.current_status.get("pending") or {}).get("render") or ())
        return ApplyResult(kinds=list(scope.verified.kinds), verified=scope.verified)
    objects = render(scope, scope.observation.observed)
    await (scope.derived or DerivedJudge()).refuse(scope.api, objects)
    applied = await apply_inventory(
        scope.api,
        objects,
        cluster=cluster,
        namespace=namespace,
        previous_kinds=previous_kinds,
        keep=keep,
        recorder=scope.recorder,
        inputs=inputs,
    )
    for line in scope.not_kept:
        # Said once, after the apply that rolls the pool: the next pass renders what is live, so the pool
        # is no longer listed; a pass refused before its apply says nothing of a roll that did not happen.
        scope.recorder.info(str(Reason.TEMPLATE_NOT_KEPT), line)
    return applied


async def _live_templates(scope: Scope) -> dict[str, Mapping[str, Any]]:
    """The machine templates the live MachineDeployments run (ours, so the watch cache answers)."""
    found: dict[str, Mapping[str, Any]] = {}
    namespace = scope.cluster.metadata.namespace if scope.cluster is not None else None
    for md in scope.live_deployments:
        ref = ((((md.get("spec") or {}).get("template") or {}).get("spec") or {}).get("infrastructureRef")) or {}
        if not ref.get("name") or not ref.get("apiVersion") or not ref.get("kind"):
            continue
        res = await scope.api.resource(str(ref["apiVersion"]), str(ref["kind"]))
        live = await scope.api.get(res, str(ref["name"]), namespace, ours=True) if res is not None else None
        if live is not None:
            found[str(ref["name"])] = live
    return found


def render_inputs(scope: Scope, previous_kinds: Sequence[str], keep: set[tuple[str, str]]) -> bytes:
    """A digest of everything `_render` and the prune read: the render is a pure function of these, so
    equal inputs render equal objects (the process's own code is fixed while its memory of them lives)."""
    assert scope.cluster is not None and scope.observation is not None
    digest = hashlib.blake2b(digest_size=16)
    observed = scope.observation.observed
    platform = scope.platform
    for model in (scope.cluster, *scope.pools, observed, platform.charts, platform.images):
        digest.update(model.model_dump_json().encode() if model is not None else b"null")
        digest.update(b"\0")
    # The upgrade's target is the cluster's spec (above); which pools it holds back is not.
    held = sorted(scope.upgrade.held.items()) if scope.upgrade is not None else []
    live = sorted(live_refs(scope.live_deployments).items())
    # Of the live templates the render reads only whether an unkept level marks them (render.levels).
    marked = sorted((name, tuple(row.marks(t) for row in LEVELS if not row.kept))
                    for name, t in scope.live_templates.items())
    digest.update(repr((scope.kamaji_release, held, live, marked, sorted(previous_kinds), sorted(keep))).encode())
    digest.update(repr(scope.restore_phase).encode())
    return digest.digest()


def render(scope: Scope, observed: ObservedState | None) -> list[Obj]:
    """The target render, with each held pool's objects taken from a render at the versions it runs."""
    assert scope.cluster is not None
    cluster = scope.cluster
    charts, images = scope.platform.charts, scope.platform.images
    objects = render_cluster(cluster, scope.pools, observed, charts, images, kamaji=scope.kamaji_release)
    upgrade = scope.upgrade
    by_versions: dict[Versions, set[str]] = {}
    held, target = (upgrade.held, upgrade.target) if upgrade is not None else ({}, None)
    for pool, versions in held.items():
        # A pool whose running version is unknown yet (its template names none) is rendered at the target.
        if versions.kubernetes and versions != target:
            by_versions.setdefault(versions, set()).add(pool)
    rendered_at: dict[str, TenantCluster] = {}
    for versions, pools in by_versions.items():
        at_running = cluster.model_copy(update={"spec": cluster.spec.model_copy(update={
            "version": versions.kubernetes,
            "talos": cluster.spec.talos.model_copy(update={"version": versions.talos}),
        })})
        rendered_at |= dict.fromkeys(pools, at_running)
        old = [o for o in render_cluster(at_running, scope.pools, observed, charts, images, kamaji=scope.kamaji_release)
               if pool_of(o) in pools]
        objects = swap_pools(objects, pools, old)
    objects = _keep_live_templates(scope, objects, observed, rendered_at)
    return hold_for_restore(cluster, objects, scope.restore_phase, images or ImagesSpec())


def _keep_live_templates(scope: Scope, objects: list[Obj], observed: ObservedState | None,
                         rendered_at: Mapping[str, TenantCluster]) -> list[Obj]:
    """A live pool whose machine template only this release's render changes keeps the one it runs."""
    assert scope.cluster is not None
    cluster = scope.cluster
    platform = scope.platform

    def render_pool(name: str, pools: Sequence[NodePool]) -> list[Obj]:
        return render_cluster(rendered_at.get(name, cluster), pools, observed, platform.charts, platform.images,
                              kamaji=scope.kamaji_release)

    kept = keep_live_templates(scope.pools, objects, scope.live_deployments, render_pool, scope.live_templates)
    scope.waiting_for_roll = kept.waiting
    scope.not_kept = kept.rolling
    return kept.objects


async def chart_sources(scope: Scope) -> None:
    """The add-ons, and so their sources, need the endpoint: applied once it is known."""
    assert scope.applied is not None and scope.observation is not None
    if scope.observation.observed is not None:
        scope.applied.applied += await apply_shared(scope.api, _chart_sources(scope))


def _chart_sources(scope: Scope) -> list[Obj]:
    """The sources of this tenant's add-on charts, where the Platform says (`render --platform` renders them)."""
    assert scope.cluster is not None
    in_use = charts_used([scope.cluster], scope.platform.images or ImagesSpec())
    return render_chart_sources(scope.platform.charts or ChartSourcesSpec(), in_use)


def _kept(scope: Scope) -> set[tuple[str, str]]:
    """Never pruned: the Talos secrets, and TalosConfigTemplates while the endpoint is unknown."""
    assert scope.cluster is not None
    names = Names(scope.cluster)
    kept = {("Secret", names.talos_secrets)}
    if scope.observation is None or scope.observation.observed is None:
        kept |= {("TalosConfigTemplate", names.talos_config_template(p)) for p in scope.pools}
    return kept
