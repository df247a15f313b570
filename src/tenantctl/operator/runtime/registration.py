"""Which events start which pass: every kopf handler, registered on a fresh registry bound to a context."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Mapping
from typing import Any

import kopf

from tenantctl.collector import tune_collector
from tenantctl.operator.config.settings import WebhookSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.install.webhook import CLUSTER_WEBHOOK, POOL_WEBHOOK
from tenantctl.operator.kube.client import APIError
from tenantctl.operator.phases.events import object_logger
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.phases.platform import PLATFORMS
from tenantctl.operator.runtime.admission import review
from tenantctl.operator.runtime.cache_scope import LIST_PAGE_SIZE
from tenantctl.operator.runtime.claims import label, owner_label
from tenantctl.operator.runtime.context import PASSES_END_WITHIN, OperatorContext
from tenantctl.operator.runtime.finalizers import finalizer_of, orphaned
from tenantctl.operator.runtime.kinds import (
    GROUP,
    KOPF_OBJECT_LOGGER,
    NODE_POOLS,
    TENANT_CLUSTERS,
    VERSION,
    WATCH_EVENT_HANDLERS,
)
from tenantctl.operator.runtime.kopf_session import bounded_session
from tenantctl.operator.runtime.logs import routine_at_debug
from tenantctl.operator.runtime.passes import (
    first_of,
    kamaji_release,
    needs_pass,
    orphan_status,
    pool_gone,
    run_pass,
    tear_down,
    until_done,
    write_status,
)

_REFUSED = 422
_ID_BEFORE_SPLIT = "build_registry.<locals>."
"""The ids kopf gave these handlers when one function registered them all (their qualified names): kopf
keeps a delete handler's retries under its id in the object's annotations, and logs by it, so they are
kept across the move into groups."""


class NoDiffBase(kopf.DiffBaseStorage):
    """No last-handled state: the operator registers no creation, update or resume handlers.

    Passes start from events and resyncs, and teardown from the deletion timestamp, so kopf has no
    diff to compute. Its default storage deep-copied every body on every event and patched a copy of
    each spec into an annotation of every TenantCluster and NodePool (a request and a watch event per
    object). An `on.create`/`on.update`/`on.resume` handler would never fire with this storage
    (`test_handlers_need_no_diff_base` keeps it so).
    """

    def build(self, *, body: kopf.Body, extra_fields: Any = None) -> kopf.BodyEssence:
        return kopf.BodyEssence()

    def fetch(self, *, body: kopf.Body) -> kopf.BodyEssence | None:
        return kopf.BodyEssence()

    def store(self, *, body: kopf.Body, patch: kopf.Patch, essence: kopf.BodyEssence) -> None:
        return None


def configure_kopf(settings: kopf.OperatorSettings, shard: Shard) -> None:
    """kopf as a shard of the operator runs it (the collector, the shard's finalizer and watch selection,
    what is posted and stored); the floor benchmark starts its kopf with the same."""
    tune_collector()
    settings.persistence.finalizer = finalizer_of(shard)
    routine_at_debug(KOPF_OBJECT_LOGGER, WATCH_EVENT_HANDLERS)
    settings.posting.level = logging.INFO
    settings.posting.loggers = False
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix="tenantctl.io")
    settings.persistence.diffbase_storage = NoDiffBase()
    settings.watching.chunk_size = LIST_PAGE_SIZE
    if shard.selector:
        for plural in ("tenantclusters", "nodepools"):
            settings.watching.label_selectors[GROUP, plural] = shard.selector


def build_registry(ctx: OperatorContext) -> kopf.OperatorRegistry:
    """Every handler of the operator, registered on a fresh registry bound to `ctx`, in this order."""
    registry = kopf.OperatorRegistry()
    kinds = _handler_kinds(ctx.settings.shard, registry)
    _register_lifecycle(ctx, registry)
    _register_reconciler(ctx, kinds["clusters"])
    _register_events(ctx, registry, kinds["cluster_events"], kinds["pool_events"])
    if ctx.settings.shard.count > 1:
        _register_misplaced(ctx, registry)
    _register_deletions(ctx, kinds["clusters"], kinds["pools"])
    if ctx.settings.webhook is not None:
        _register_admission(ctx, registry)
    return registry


def _handler_kinds(shard: Shard, registry: kopf.OperatorRegistry) -> dict[str, dict[str, Any]]:
    """The kopf resource arguments of each handler group, with the shard filter.

    The shard filter sits on every resource handler: kopf adds finalizers, starts daemons and runs
    teardown only for the objects this shard owns and holds the label of (the watches select that label
    on the server; the filter keeps it so against a server that would not). Event handlers also see
    the DELETED that a tenant leaving the selection brings: the server sends it with the old labels."""

    def owned_cluster(namespace: str, name: str, **_: Any) -> bool:
        return shard.owns(namespace, name)

    def owned_pool(namespace: str, spec: Mapping[str, Any], **_: Any) -> bool:
        return shard.owns(namespace, str(spec.get("cluster") or ""))

    def held_cluster(namespace: str, name: str, labels: Mapping[str, str], **_: Any) -> bool:
        return shard.owns(namespace, name) and shard.labelled(labels)

    def held_pool(namespace: str, spec: Mapping[str, Any], labels: Mapping[str, str], **_: Any) -> bool:
        return shard.owns(namespace, str(spec.get("cluster") or "")) and shard.labelled(labels)

    kinds = dict(group=GROUP, version=VERSION, registry=registry)
    return {"clusters": dict(plural="tenantclusters", when=held_cluster, **kinds),
            "pools": dict(plural="nodepools", when=held_pool, **kinds),
            "cluster_events": dict(plural="tenantclusters", when=owned_cluster, **kinds),
            "pool_events": dict(plural="nodepools", when=owned_pool, **kinds)}


def _register_lifecycle(ctx: OperatorContext, registry: kopf.OperatorRegistry) -> None:
    """Start, stop and kopf's own login."""
    shard = ctx.settings.shard

    @kopf.on.startup(registry=registry, id=_ID_BEFORE_SPLIT + "configure")
    async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure_kopf(settings, shard)
        if ctx.settings.webhook is not None:
            settings.admission.server = _webhook_server(ctx.settings.webhook)
        await ctx.start()

    @kopf.on.cleanup(registry=registry, id=_ID_BEFORE_SPLIT + "close")
    async def close(**_: Any) -> None:
        """Stopped by a signal, kopf 1.45 leaves its waiter on the stop flag pending and gives it 5 s as a
        hung task before cancelling it: every SIGTERM took 5.2 s. Setting the flag ends the waiter."""
        await ctx.stop()
        ctx.stop_flag.set()

    @kopf.on.login(registry=registry, id=_ID_BEFORE_SPLIT + "login")
    async def login(**_: Any) -> kopf.AiohttpSession:
        """kopf's watches use the credentials our client would send now, over a bounded pool; after a 401
        kopf closes the session and asks again."""
        info = await ctx.connection.login()
        return bounded_session(kopf.ConnectionInfo(**info, scheme="Bearer" if info["token"] else None))


def _register_reconciler(ctx: OperatorContext, clusters: dict[str, Any]) -> None:
    @kopf.daemon(**clusters, id=_ID_BEFORE_SPLIT + "reconciler",  # type: ignore[arg-type]
                 cancellation_timeout=PASSES_END_WITHIN)
    async def reconciler(stopped: kopf.DaemonStopped, namespace: str, name: str, **_: Any) -> None:
        """Run passes until the object goes: on a wake-up, soon while waiting, else every resync."""
        waits = 0
        with ctx.watching((namespace, name)) as wakeup:
            while not stopped and not ctx.stopping and ctx.serving((namespace, name), wakeup):
                wakeup.clear()
                ctx.triggers.scheduled((namespace, name))
                try:
                    next_pass = await run_pass(ctx, namespace, name)
                except APIError as exc:
                    object_logger(namespace, name).warning("pass failed, retrying soon: %s", exc)
                    next_pass = Next.BACKOFF
                except Exception as exc:  # a pass must never kill the daemon; the next one retries
                    object_logger(namespace, name).exception("pass failed, retrying soon: %s", exc)
                    next_pass = Next.BACKOFF
                waits = next_pass.waits_after(waits)
                delay = ctx.settings.requeue_delay_after(waits)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(delay):
                        await first_of(wakeup.wait(), stopped.wait())


def _register_events(ctx: OperatorContext, registry: kopf.OperatorRegistry, cluster_events: dict[str, Any],
                     pool_events: dict[str, Any]) -> None:
    """Watch events wake a cluster's daemon (they write nothing); an orphaned object is torn down."""
    shard = ctx.settings.shard
    own = finalizer_of(shard)

    @kopf.on.event(GROUP, VERSION, PLATFORMS.plural, id="platform_changed", registry=registry)
    async def platform_changed(name: str, **_: Any) -> None:
        """A Platform edit re-renders every tenant of this shard now, not at the next resync."""
        if name == ctx.settings.platform_name:
            for key in ctx.watched:
                ctx.wake(key)

    @kopf.on.event(**cluster_events, id="cluster_changed")  # type: ignore[arg-type]
    async def cluster_changed(event: kopf.RawEvent, body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        if event["type"] == "DELETED":
            ctx.release((namespace, name))
        elif not shard.labelled(body.metadata.labels):
            return
        elif orphaned(body, own):
            await until_done(ctx, TENANT_CLUSTERS, namespace, name, lambda: tear_down(ctx, dict(body), namespace, name))
        elif needs_pass(body) and ctx.triggers.wakes((namespace, name), body):
            ctx.wake((namespace, name))

    @kopf.on.event(**pool_events, id="pool_changed")  # type: ignore[arg-type]
    async def pool_changed(event: kopf.RawEvent, body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        deleted = event["type"] == "DELETED"
        if not deleted and not shard.labelled(body.metadata.labels):
            return
        if not deleted and orphaned(body, own):
            await until_done(ctx, NODE_POOLS, namespace, name, lambda: pool_gone(ctx, body, namespace, name))
            return
        cluster = (body.get("spec") or {}).get("cluster")
        if not needs_pass(body) or not cluster or body.get("metadata", {}).get("deletionTimestamp"):
            return
        if (namespace, str(cluster)) in ctx.watched:
            if ctx.triggers.wakes((namespace, str(cluster)), body):
                ctx.wake((namespace, str(cluster)))
        elif await ctx.api.get(TENANT_CLUSTERS, str(cluster), namespace) is None:
            await write_status(ctx.api, NODE_POOLS, body, orphan_status(body, namespace, str(cluster)))


def _register_deletions(ctx: OperatorContext, clusters: dict[str, Any], pools: dict[str, Any]) -> None:
    @kopf.on.delete(**pools, id=_ID_BEFORE_SPLIT + "pool_deleted")  # type: ignore[arg-type]
    async def pool_deleted(body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        await pool_gone(ctx, body, namespace, name)

    @kopf.on.delete(**clusters, id=_ID_BEFORE_SPLIT + "cluster_deleted")  # type: ignore[arg-type]
    async def cluster_deleted(body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        await tear_down(ctx, dict(body), namespace, name)


def _register_misplaced(ctx: OperatorContext, registry: kopf.OperatorRegistry) -> None:
    """A tenant labelled for this shard that another shard of this layout owns (its label edited by hand):
    given to its owner, who would otherwise never see it. Shards of one layout agree on every owner."""
    shard = ctx.settings.shard

    def misplaced_cluster(namespace: str, name: str, labels: Mapping[str, str], **_: Any) -> bool:
        return shard.labelled(labels) and not shard.owns(namespace, name)

    def misplaced_pool(namespace: str, spec: Mapping[str, Any], labels: Mapping[str, str], **_: Any) -> bool:
        cluster = str(spec.get("cluster") or "")
        return bool(cluster) and shard.labelled(labels) and not shard.owns(namespace, cluster)

    @kopf.on.event(GROUP, VERSION, "tenantclusters", when=misplaced_cluster, id="cluster_misplaced",  # type: ignore[arg-type]
                   registry=registry)
    async def cluster_misplaced(event: kopf.RawEvent, body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        if event["type"] != "DELETED":
            await label(ctx.api, TENANT_CLUSTERS, body, owner_label(namespace, name, shard.count))

    @kopf.on.event(GROUP, VERSION, "nodepools", when=misplaced_pool, id="pool_misplaced",  # type: ignore[arg-type]
                   registry=registry)
    async def pool_misplaced(event: kopf.RawEvent, body: kopf.Body, namespace: str, spec: Any, **_: Any) -> None:
        if event["type"] != "DELETED":
            await label(ctx.api, NODE_POOLS, body, owner_label(namespace, str(spec["cluster"]), shard.count))


def _webhook_server(webhook: WebhookSettings) -> kopf.WebhookServer:
    if webhook.cert_dir is None:
        return kopf.WebhookServer(addr=webhook.addr, port=webhook.port, insecure=True)
    return kopf.WebhookServer(
        addr=webhook.addr,
        port=webhook.port,
        certfile=f"{webhook.cert_dir}/tls.crt",
        pkeyfile=f"{webhook.cert_dir}/tls.key",
    )


def _register_admission(ctx: OperatorContext, registry: kopf.OperatorRegistry) -> None:
    """Refuse at `kubectl apply` what `validate` refuses and CEL cannot see (see `operator.admission`)."""

    async def admit(operation: str, new: Any, old: Any, warnings: list[str]) -> None:
        platform = await ctx.platform.settings(ctx.api)
        kamaji = await kamaji_release(ctx, ctx.api, platform)
        verdict = await review(ctx.api, TENANT_CLUSTERS, NODE_POOLS, operation, new, old, kamaji, ctx.derived,
                               platform.restore_across_namespaces)
        warnings.extend(verdict.warnings)
        if verdict.refusals:
            raise kopf.AdmissionError("\n".join(verdict.refusals), code=_REFUSED)

    @kopf.on.validate(  # type: ignore[arg-type]
        GROUP, VERSION, "tenantclusters", id=CLUSTER_WEBHOOK, operations=["CREATE", "UPDATE", "DELETE"],
        registry=registry,
    )
    async def admit_cluster(operation: str, new: Any, old: Any, warnings: list[str], **_: Any) -> None:
        await admit(operation, new, old, warnings)

    @kopf.on.validate(  # type: ignore[arg-type]
        GROUP, VERSION, "nodepools", id=POOL_WEBHOOK, operations=["CREATE", "UPDATE"], registry=registry
    )
    async def admit_pool(operation: str, new: Any, old: Any, warnings: list[str], **_: Any) -> None:
        await admit(operation, new, old, warnings)

