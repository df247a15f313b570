"""One pass of a tenant as the daemon runs it: read the tenant and its pools, reconcile, write the
status only where it differs, count it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from tenantctl.operator.kube.client import APIError, KubeClient, NotFoundError, Resource
from tenantctl.operator.phases.conditions import ConditionType, Phase, Reason, condition, merge_conditions
from tenantctl.operator.phases.events import object_logger
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.phases.platform import PlatformSettings
from tenantctl.operator.phases.reconcile import PassResult, Scope, reconcile, status_patch
from tenantctl.operator.phases.teardown import TeardownEnded, TeardownReport, TeardownScope, teardown
from tenantctl.operator.runtime.context import KopfRecorder, OperatorContext
from tenantctl.operator.runtime.finalizers import finalizer_of, orphaned, release, take_over
from tenantctl.operator.runtime.kinds import NODE_POOLS, TENANT_CLUSTERS
from tenantctl.operator.runtime.metrics import Outcome
from tenantctl.operator.runtime.teardown_status import Reported, report_teardown, still_to_tear_down
from tenantctl.spec.compat import KamajiRelease

_CACHE_CATCH_UP_ROUNDS = 4
_CACHE_CATCH_UP_DELAY = 0.05
"""Cache reads before a pass that is behind its events reads the server: 0.05 + 0.1 + 0.15 + 0.2 s."""


async def pools_of(
    api: KubeClient, namespace: str, cluster: str, excluding: str | None = None, *, cached: bool = True
) -> list[dict[str, Any]]:
    return [
        p
        for p in await api.list(NODE_POOLS, namespace, cached=cached)
        if (p.get("spec") or {}).get("cluster") == cluster
        and not p["metadata"].get("deletionTimestamp")
        and p["metadata"]["name"] != excluding
    ]


async def write_status(api: KubeClient, res: Resource, body: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Patch `.status` only where it differs: an idle pass writes nothing."""
    patch = status_patch(body.get("status") or {}, wanted)
    if patch is None:
        return False
    meta = body["metadata"]
    try:
        await api.merge_patch(res, meta["name"], meta.get("namespace"), {"status": patch}, status=True)
    except NotFoundError:
        return False
    return True


async def run_pass(ctx: OperatorContext, namespace: str, name: str, excluding_pool: str | None = None) -> Next:
    """One reconcile pass of a cluster, and when the next one should run."""
    if ctx.stopping:
        return Next.RESYNC
    with ctx.passing():
        return await _run_pass(ctx, namespace, name, excluding_pool)


async def _run_pass(ctx: OperatorContext, namespace: str, name: str, excluding_pool: str | None) -> Next:
    async with ctx.lock((namespace, name)), ctx.gate:
        clock = asyncio.get_running_loop().time
        started = clock()
        try:
            result = await _pass(ctx, namespace, name, excluding_pool)
        except Exception:
            ctx.metrics.pass_done(Outcome.FAILED, clock() - started)
            raise
        if result is None:
            return Next.RESYNC
        took = clock() - started
        ctx.metrics.pass_done(Outcome.CONVERGED if result.next is Next.RESYNC else Outcome.WAITING, took)
        ctx.metrics.phase((namespace, name), result.status.get("phase"))
        ctx.metrics.upgrade_stage((namespace, name), (result.status.get("upgrade") or {}).get("stage"))
        ctx.metrics.backup_state((namespace, name), (result.status.get("backup") or {}).get("state"))
        ctx.passes[namespace, name] += 1
        object_logger(namespace, name).debug("pass %d took %.3fs", ctx.passes[namespace, name], took)
        return result.next


async def _pass(ctx: OperatorContext, namespace: str, name: str, excluding_pool: str | None) -> PassResult | None:
    """Read, reconcile, write the status; None when the cluster is gone or going."""
    api = ctx.api
    key = (namespace, name)
    # The cache is a few milliseconds behind kopf's watch at most, unless a watch outage left it further
    # behind: give it a moment, then ask the server (the last round) rather than act on the old copy.
    rounds = (*(True,) * _CACHE_CATCH_UP_ROUNDS, False)
    shard = ctx.settings.shard
    for i, cached in enumerate(rounds):
        body = await api.get(TENANT_CLUSTERS, name, namespace, cached=cached)
        going = body is None or body["metadata"].get("deletionTimestamp")
        pools = [] if going else await pools_of(api, namespace, name, excluding_pool, cached=cached)
        ours = body is None or shard.labelled(body["metadata"].get("labels"))
        if not cached or (ours and not ctx.triggers.behind(key, [body, *pools] if body is not None else [])):
            break
        await asyncio.sleep(_CACHE_CATCH_UP_DELAY * (i + 1))
    if ctx.triggers.read(key, [body, *pools] if body is not None else [], fresh=not cached):
        ctx.wake(key)
    if not ours:  # the server says another shard's label is on it now: that shard's passes run, not ours
        ctx.release(key)
        return None
    if body is None or going:
        return None
    own = finalizer_of(ctx.settings.shard)
    for res, obj in ((TENANT_CLUSTERS, body), *((NODE_POOLS, p) for p in pools)):
        await take_over(api, res, obj, own)
    platform = await ctx.platform.settings(api)
    scope = Scope(
        api=api, settings=ctx.settings, recorder=KopfRecorder(body), body=body, pool_bodies=pools,
        tenant_clients=ctx.tenant_clients, kamaji=ctx.kamaji, derived=ctx.derived, platform=platform,
        kamaji_release=await kamaji_release(ctx, api, platform), verified=ctx.verified.get(key),
        identity=await ctx.identity(),
    )
    result = await reconcile(scope)
    verified = scope.applied.verified if scope.applied is not None else None
    if verified is not None:
        ctx.verified[key] = verified
    else:
        ctx.verified.pop(key, None)
    await write_status(api, TENANT_CLUSTERS, body, result.status)
    for pool in pools:
        await write_status(api, NODE_POOLS, pool, result.pool_status[pool["metadata"]["name"]])
    return result


async def kamaji_release(ctx: OperatorContext, api: KubeClient, platform: PlatformSettings) -> KamajiRelease:
    """The operator's --kamaji-version, else the Platform's spec.kamaji.version, else observed or the default."""
    if ctx.settings.kamaji_release is None and platform.kamaji is not None:
        return platform.kamaji
    return await ctx.kamaji.release(api, ctx.settings.kamaji_release)


def orphan_status(body: Mapping[str, Any], namespace: str, cluster: str) -> dict[str, Any]:
    """A pool whose TenantCluster does not exist: said in its status, nothing rendered for it."""
    gen = body.get("metadata", {}).get("generation")
    message = f"TenantCluster {namespace}/{cluster} does not exist"
    cond = condition(ConditionType.READY, False, Reason.CLUSTER_NOT_FOUND, message, gen)
    current = (body.get("status") or {}).get("conditions") or []
    return {"observedGeneration": gen, "phase": Phase.PENDING, "conditions": merge_conditions(current, [cond])}


def needs_pass(body: Mapping[str, Any]) -> bool:
    status = body.get("status") or {}
    return bool(body.get("metadata", {}).get("generation") != status.get("observedGeneration"))


async def until_done(
    ctx: OperatorContext, res: Resource, namespace: str, name: str, step: Callable[[], Awaitable[None]]
) -> None:
    """Complete the deletion of an object no kopf finalizer of this shard holds, retrying as kopf would,
    until it is done or the object went another way (a shard of the old layout finished it first)."""
    own = finalizer_of(ctx.settings.shard)
    while True:
        try:
            await step()
        except APIError as exc:
            object_logger(namespace, name).warning("deletion failed, retrying soon: %s", exc)
        else:
            return
        await asyncio.sleep(ctx.settings.requeue_delay)
        current = await ctx.api.get(res, name, namespace)
        if current is None or not orphaned(current, own):
            return


async def first_of(*aws: Any) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()


async def pool_gone(ctx: OperatorContext, body: Mapping[str, Any], namespace: str, name: str) -> None:
    """Prune the pool's objects through a pass of its cluster that no longer sees the pool."""
    cluster = (body.get("spec") or {}).get("cluster")
    ctx.triggers.forget("NodePool", namespace, name)
    if cluster:
        await run_pass(ctx, namespace, str(cluster), excluding_pool=name)
    await release(ctx.api, NODE_POOLS, namespace, name, finalizer_of(ctx.settings.shard))


async def tear_down(ctx: OperatorContext, raw: dict[str, Any], namespace: str, name: str) -> None:
    """Tear down in order, then drop other shard layouts' finalizers; kopf removes ours as the handler returns.

    Not on a tenant the server shows gone or torn down to its last step, and no further than the step
    where it finds so: two layouts running at once both tear a deleted tenant down, and kopf runs the
    slower one's handler anew for each event queued before the faster one released it. Each such run
    found the tenant's kubeconfig or API gone and, for a proxmox tenant, warned that its disks may
    remain: falsely, the first run freed them. The steps start from the server's copy, not kopf's
    event, which may be one of those queued.
    """
    api = ctx.api

    async def progress(report: TeardownReport) -> None:
        if await report_teardown(api, TENANT_CLUSTERS, namespace, name, report) is Reported.ENDED:
            raise TeardownEnded

    await ctx.tenant_clients.forget(f"{namespace}/{name}")
    ctx.verified.pop((namespace, name), None)
    ctx.triggers.forget("TenantCluster", namespace, name)
    report: TeardownReport | None = None
    async with ctx.lock((namespace, name)):
        current = await still_to_tear_down(api, TENANT_CLUSTERS, namespace, name)
        if current is not None:
            scope = TeardownScope(
                api=api, settings=ctx.settings, recorder=KopfRecorder(raw), body=current, progress=progress
            )
            with contextlib.suppress(TeardownEnded):
                report = await teardown(scope)
    if report is None:
        object_logger(namespace, name).debug("torn down by another teardown (gone, or its report finished)")
    else:
        ctx.metrics.teardown_leftovers(report.steps)
    ctx.metrics.phase((namespace, name), None)
    ctx.metrics.upgrade_stage((namespace, name), None)
    ctx.metrics.backup_state((namespace, name), None)
    await release(api, TENANT_CLUSTERS, namespace, name, finalizer_of(ctx.settings.shard))
