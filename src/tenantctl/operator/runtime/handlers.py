"""The kopf side: which events start which pass. All behaviour lives in the phase modules.

One daemon per TenantCluster runs the reconcile passes, so passes of one cluster never overlap
with each other; watch events (cheap, writing nothing) only wake it. The idle resync is the
daemon's timeout: it re-reads, compares, and writes nothing when nothing drifted.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import kopf

from tenantctl.collector import tune_collector
from tenantctl.operator.config.settings import OperatorSettings, WebhookSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.install.webhook import CLUSTER_WEBHOOK, POOL_WEBHOOK
from tenantctl.operator.kube.cache import ByName, Extra, InFull, WatchCache
from tenantctl.operator.kube.client import APIError, Connection, KubeClient, NotFoundError, Resource
from tenantctl.operator.kube.tenants import TenantClients
from tenantctl.operator.phases.apply import Verified
from tenantctl.operator.phases.conditions import ConditionType, Phase, Reason, condition, merge_conditions
from tenantctl.operator.phases.derived import DerivedJudge
from tenantctl.operator.phases.events import object_logger
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.phases.platform import PLATFORMS, PlatformReader, PlatformSettings
from tenantctl.operator.phases.reconcile import PassResult, Scope, reconcile, status_patch
from tenantctl.operator.phases.talos_api import KamajiSchema
from tenantctl.operator.phases.teardown import TeardownEnded, TeardownReport, TeardownScope, teardown
from tenantctl.operator.runtime.admission import review
from tenantctl.operator.runtime.claims import Claims, cluster_of_cluster, cluster_of_pool, label, owner_label
from tenantctl.operator.runtime.finalizers import finalizer_of, orphaned, release, take_over
from tenantctl.operator.runtime.kopf_session import bounded_session
from tenantctl.operator.runtime.logs import routine_at_debug
from tenantctl.operator.runtime.metrics import Metrics, Outcome
from tenantctl.operator.runtime.teardown_status import Reported, report_teardown, still_to_tear_down
from tenantctl.operator.runtime.triggers import Triggers
from tenantctl.render.meta import (
    CLUSTER_LABEL,
    KAMAJI_CONTROL_PLANE_LABEL,
    MANAGED_BY,
    NAMESPACE_LABEL,
    TALOS_CA_SUFFIX,
    kamaji_admin_kubeconfig,
    kamaji_ca,
)
from tenantctl.render.talos_api import TENANT_CONTROL_PLANE_API
from tenantctl.spec.compat import KamajiRelease

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["CLUSTER_WEBHOOK", "GROUP", "POOL_WEBHOOK", "VERSION", "NoDiffBase", "OperatorContext", "build_registry",
           "configure_kopf"]

GROUP, VERSION = "tenantctl.io", "v1alpha1"
KOPF_OBJECT_LOGGER = "kopf.objects"
WATCH_EVENT_HANDLERS = ("platform_changed", "cluster_changed", "pool_changed", "cluster_misplaced", "pool_misplaced")
"""The ids of the handlers every watch event runs: their successes are DEBUG lines (`RoutineAtDebug`)."""
TENANT_CLUSTERS = Resource(f"{GROUP}/{VERSION}", "TenantCluster", "tenantclusters", True)
NODE_POOLS = Resource(f"{GROUP}/{VERSION}", "NodePool", "nodepools", True)

Key = tuple[str, str]
def inventory_of(shard: Shard) -> Callable[[str | None, Mapping[str, str]], bool] | None:
    """Which labelled objects a shard's cache holds: those of its own tenants, and shared ones (no
    tenant label: the chart sources). A namespaced object's tenant is its namespace and cluster label;
    a cluster-scoped one names its namespace in a label. None (hold all) for the single shard."""
    if shard.count == 1:
        return None

    def held(namespace: str | None, labels: Mapping[str, str]) -> bool:
        cluster = labels.get(CLUSTER_LABEL)
        tenant_namespace = namespace if namespace is not None else labels.get(NAMESPACE_LABEL)
        return cluster is None or tenant_namespace is None or shard.owns(tenant_namespace, cluster)

    return held


def read_secrets_of(shard: Shard) -> Extra:
    """Which Secrets of other controllers a shard's cache holds: those every pass of its tenants reads,
    so even a tenant's first read is answered from memory. Kamaji's CA and admin kubeconfig (labelled
    with their TenantControlPlane, named as the TenantCluster; Kamaji's other eight per tenant are never
    read, not held) and the Talos CA cert-manager issues, known by the name our Certificate gives it."""

    def held(key: tuple[str | None, str], labels: Mapping[str, str]) -> bool:
        (namespace, name), control_plane = key, labels.get(KAMAJI_CONTROL_PLANE_LABEL)
        if namespace is None:
            return False
        if control_plane is not None and name in (kamaji_ca(control_plane), kamaji_admin_kubeconfig(control_plane)):
            return shard.owns(namespace, control_plane)
        cluster = name.removesuffix(TALOS_CA_SUFFIX)
        return cluster != name and shard.owns(namespace, cluster)

    return held


def named_as_tenants_of(shard: Shard) -> Extra:
    """Objects of other controllers named as the TenantCluster they serve, held for the shard's own
    tenants: Kamaji's apiserver Service and TenantControlPlane, which every pass reads by that name.
    Held whole, every shard kept all of them (20,000 objects at 10,000 tenants over any shard count).
    Held by name alone, so a new tenant's first read of them, before Kamaji made them, asks no server."""

    def held(key: tuple[str | None, str]) -> bool:
        namespace, name = key
        return namespace is not None and shard.owns(namespace, name)

    return ByName(held)


def other_controllers_objects_of(shard: Shard) -> dict[tuple[str, str], Extra]:
    """Per (apiVersion, plural), which objects of other controllers the shard's cache holds."""
    named = named_as_tenants_of(shard)
    return {("v1", "secrets"): read_secrets_of(shard), ("v1", "services"): named,
            (TENANT_CONTROL_PLANE_API, "tenantcontrolplanes"): named}


LIST_PAGE_SIZE = 500
"""Objects per page of every list, kopf's and the cache's: all TenantClusters in one answer were one
allocation of every shard's, tens of MiB at ten thousand tenants."""
OWNED = {"app.kubernetes.io/managed-by": MANAGED_BY}
"""The label of every object the operator renders: the watch cache holds these, and what a pass names."""
HELD_WHOLE = frozenset({(f"{GROUP}/{VERSION}", "tenantclusters"), (f"{GROUP}/{VERSION}", "nodepools")})
"""Held whole by the watch cache: any replica may serve the admission webhook, which judges a change
against the tenant's cluster and pools whichever shard owns them; the pass lists a namespace's pools.
Of other shards' tenants a shard holds outlines (`tenants_in_full_of`). Secrets, Services and
TenantControlPlanes are held for the shard's own tenants only (`other_controllers_objects_of`)."""


def tenants_in_full_of(shard: Shard) -> dict[tuple[str, str], InFull]:
    """Which TenantClusters and NodePools a shard's cache holds in full: its own tenants' (a pool goes
    with its cluster). Every other shard's are outlines, their spec and identity, which is all the
    webhook reads of them. The single shard holds all in full."""
    if shard.count == 1:
        return {}

    def ours(cluster_of: Callable[[Mapping[str, Any]], str]) -> InFull:
        return lambda obj: shard.owns(str((obj.get("metadata") or {}).get("namespace") or ""), cluster_of(obj))

    return {(TENANT_CLUSTERS.api_version, TENANT_CLUSTERS.plural): ours(cluster_of_cluster),
            (NODE_POOLS.api_version, NODE_POOLS.plural): ours(cluster_of_pool)}


# 422: the request is understood and refused for its content, as the API server's own validation does.
_REFUSED = 422


class KopfRecorder:
    """Log with the `[ns/name]` prefix and post the same line as an Event on the object."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        meta = body["metadata"]
        self._body = body
        self._log = object_logger(meta.get("namespace", ""), meta["name"])

    def info(self, reason: str, message: str) -> None:
        self._log.info(message)
        kopf.info(self._body, reason=reason, message=message)  # type: ignore[arg-type]

    def warn(self, reason: str, message: str) -> None:
        self._log.warning(message)
        kopf.warn(self._body, reason=reason, message=message)  # type: ignore[arg-type]


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


@dataclass
class OperatorContext:
    """What every handler shares: the management connection, one client, per-cluster wake-ups."""

    connection: Connection
    settings: OperatorSettings = field(default_factory=OperatorSettings)
    _api: KubeClient | None = None
    _gate: asyncio.Semaphore | None = None
    _locks: dict[Key, asyncio.Lock] = field(default_factory=dict)
    _wakeups: dict[Key, asyncio.Event] = field(default_factory=dict)
    tenant_clients: TenantClients = field(default_factory=TenantClients)
    kamaji: KamajiSchema = field(default_factory=KamajiSchema)
    derived: DerivedJudge = field(default_factory=DerivedJudge)
    platform: PlatformReader = field(default_factory=PlatformReader)
    passes: Counter[Key] = field(default_factory=Counter)
    """Completed passes per cluster: what a test or the benchmark waits on."""
    verified: dict[Key, Verified] = field(default_factory=dict)
    """Per cluster, the last pass's word that its render was in place (a few dozen bytes each)."""
    triggers: Triggers = field(default_factory=Triggers)
    metrics: Metrics = field(default_factory=Metrics)
    stop_flag: asyncio.Event = field(default_factory=asyncio.Event)
    """kopf's stop flag (`run.py`): a new serving certificate sets it, and so does the cleanup (below)."""
    released: set[Key] = field(default_factory=set)
    """Clusters another shard took (relabelled away): their reconcilers end without another pass."""
    claims: Claims | None = None
    """A sharded operator's labelling of the tenants it owns (`claims`); None for the single shard."""
    _claims_task: asyncio.Task[None] | None = None
    _metrics_server: web.AppRunner | None = None
    stopping: bool = False
    """Set as `stop` begins: no pass starts after it."""
    _passes: dict[asyncio.Task[Any], asyncio.Future[None]] = field(default_factory=dict)
    """The tasks in a pass now, each with a future done when its pass ends (what `stop` waits on)."""

    @property
    def api(self) -> KubeClient:
        if self._api is None:
            raise RuntimeError("the operator has not started")
        return self._api

    async def start(self) -> None:
        self.stopping = False
        cache = None
        if self.settings.read_from_watches:
            cache = WatchCache(
                sync_timeout=self.settings.retry.timeout, owned=OWNED, complete=HELD_WHOLE,
                scope=inventory_of(self.settings.shard),
                extra=other_controllers_objects_of(self.settings.shard),
                in_full=tenants_in_full_of(self.settings.shard), page_size=LIST_PAGE_SIZE,
            )
        self._api = KubeClient(
            self.connection,
            field_manager=self.settings.field_manager,
            retry=self.settings.retry,
            cache=cache,
            observer=self.metrics.request,
        )
        await self._api.__aenter__()
        self._gate = asyncio.Semaphore(self.settings.concurrent_passes)
        self.kamaji = KamajiSchema(ttl=self.settings.resync_interval)
        self.derived = DerivedJudge(ttl=self.settings.resync_interval)
        self.platform = PlatformReader(self.settings.platform_name)
        if self.settings.metrics is not None:
            self._metrics_server = await self.metrics.serve(self.settings.metrics)
        if self.settings.shard.count > 1:
            self.claims = Claims(self._api, self.settings.shard, self.settings.resync_interval, LIST_PAGE_SIZE)
            kinds = {TENANT_CLUSTERS: cluster_of_cluster, NODE_POOLS: cluster_of_pool}
            self._claims_task = asyncio.create_task(self.claims.run(kinds), name="shard labels")

    @property
    def gate(self) -> asyncio.Semaphore:
        """Bounds the passes running at once: a thousand new tenants queue here, not in the API."""
        if self._gate is None:
            raise RuntimeError("the operator has not started")
        return self._gate

    @property
    def metrics_port(self) -> int:
        """The port `/metrics` is served on (what port 0 became)."""
        if self._metrics_server is None:
            raise RuntimeError("metrics are not served")
        return int(self._metrics_server.addresses[0][1])

    @contextlib.contextmanager
    def passing(self) -> Iterator[None]:
        """The current task is in a pass until the block ends: `stop` ends it before closing the client."""
        task = asyncio.current_task()
        if task is None:  # pragma: no cover - a pass always runs in a task
            yield
            return
        ended = self._passes[task] = asyncio.get_running_loop().create_future()
        try:
            yield
        finally:
            del self._passes[task]
            ended.set_result(None)

    async def _end_passes(self) -> None:
        """kopf runs its cleanup (this `stop`) while daemons are still in their grace period: a pass left
        running went on to its next request on the closed client and failed with a traceback. Passes are
        cancelled first (a cut the crash sweeps prove safe) and awaited, for as long as kopf would."""
        self.stopping = True
        current = asyncio.current_task()
        running = {task: ended for task, ended in self._passes.items() if task is not current}
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running.values(), timeout=PASSES_END_WITHIN)

    async def stop(self) -> None:
        await self._end_passes()
        if self._claims_task is not None:
            self._claims_task.cancel()
            await asyncio.gather(self._claims_task, return_exceptions=True)
            self._claims_task = None
        await self.tenant_clients.close()
        if self._metrics_server is not None:
            await self._metrics_server.cleanup()
            self._metrics_server = None
        if self._api is not None:
            await self._api.close()
            self._api = None

    def lock(self, key: Key) -> asyncio.Lock:
        return self._locks.setdefault(key, asyncio.Lock())

    @property
    def watched(self) -> set[Key]:
        """Clusters whose reconciler daemon is running."""
        return set(self._wakeups)

    def wakeup(self, key: Key) -> asyncio.Event:
        return self._wakeups.setdefault(key, asyncio.Event())

    def wake(self, key: Key) -> None:
        """Wake a running reconciler; before its daemon starts there is nothing to wake (it passes first)."""
        if key in self._wakeups:
            self._wakeups[key].set()

    @contextlib.contextmanager
    def watching(self, key: Key) -> Iterator[asyncio.Event]:
        """A reconciler's wake-up for `key`; a newer reconciler of the same key (the tenant came back to
        this shard before the older one noticed it left) takes over, and the older one ends."""
        previous, wakeup = self._wakeups.get(key), asyncio.Event()
        self._wakeups[key] = wakeup
        self.released.discard(key)
        if previous is not None:
            previous.set()
        try:
            yield wakeup
        finally:
            if self._wakeups.get(key) is wakeup:
                del self._wakeups[key]
                self.released.discard(key)

    def serving(self, key: Key, wakeup: asyncio.Event) -> bool:
        """Whether the reconciler holding `wakeup` still serves `key`: not released, not taken over."""
        return self._wakeups.get(key) is wakeup and key not in self.released

    def release(self, key: Key) -> None:
        """`key` left this shard (another shard's label, or gone): its reconciler, if one runs, ends. Only
        a running one is marked, so the set holds no tenant long gone."""
        if key in self._wakeups:
            self.released.add(key)
            self.wake(key)


PASSES_END_WITHIN = 5.0
"""How long the stop waits for cancelled passes to end: kopf's own grace for a daemon (`cancellation_timeout`)."""
_CACHE_CATCH_UP_ROUNDS = 4
_CACHE_CATCH_UP_DELAY = 0.05
"""Cache reads before a pass that is behind its events reads the server: 0.05 + 0.1 + 0.15 + 0.2 s."""


async def _pools_of(
    api: KubeClient, namespace: str, cluster: str, excluding: str | None = None, *, cached: bool = True
) -> list[dict[str, Any]]:
    return [
        p
        for p in await api.list(NODE_POOLS, namespace, cached=cached)
        if (p.get("spec") or {}).get("cluster") == cluster
        and not p["metadata"].get("deletionTimestamp")
        and p["metadata"]["name"] != excluding
    ]


async def _write_status(api: KubeClient, res: Resource, body: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
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
        pools = [] if going else await _pools_of(api, namespace, name, excluding_pool, cached=cached)
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
    )
    result = await reconcile(scope)
    verified = scope.applied.verified if scope.applied is not None else None
    if verified is not None:
        ctx.verified[key] = verified
    else:
        ctx.verified.pop(key, None)
    await _write_status(api, TENANT_CLUSTERS, body, result.status)
    for pool in pools:
        await _write_status(api, NODE_POOLS, pool, result.pool_status[pool["metadata"]["name"]])
    return result


async def kamaji_release(ctx: OperatorContext, api: KubeClient, platform: PlatformSettings) -> KamajiRelease:
    """The operator's --kamaji-version, else the Platform's spec.kamaji.version, else observed or the default."""
    if ctx.settings.kamaji_release is None and platform.kamaji is not None:
        return platform.kamaji
    return await ctx.kamaji.release(api, ctx.settings.kamaji_release)


def _orphan_status(body: Mapping[str, Any], namespace: str, cluster: str) -> dict[str, Any]:
    """A pool whose TenantCluster does not exist: said in its status, nothing rendered for it."""
    gen = body.get("metadata", {}).get("generation")
    message = f"TenantCluster {namespace}/{cluster} does not exist"
    cond = condition(ConditionType.READY, False, Reason.CLUSTER_NOT_FOUND, message, gen)
    current = (body.get("status") or {}).get("conditions") or []
    return {"observedGeneration": gen, "phase": Phase.PENDING, "conditions": merge_conditions(current, [cond])}


def _needs_pass(body: Mapping[str, Any]) -> bool:
    status = body.get("status") or {}
    return bool(body.get("metadata", {}).get("generation") != status.get("observedGeneration"))


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
    """Every handler of the operator, registered on a fresh registry bound to `ctx`."""
    registry = kopf.OperatorRegistry()
    shard = ctx.settings.shard
    own = finalizer_of(shard)

    def owned_cluster(namespace: str, name: str, **_: Any) -> bool:
        return shard.owns(namespace, name)

    def owned_pool(namespace: str, spec: Mapping[str, Any], **_: Any) -> bool:
        return shard.owns(namespace, str(spec.get("cluster") or ""))

    def held_cluster(namespace: str, name: str, labels: Mapping[str, str], **_: Any) -> bool:
        return shard.owns(namespace, name) and shard.labelled(labels)

    def held_pool(namespace: str, spec: Mapping[str, Any], labels: Mapping[str, str], **_: Any) -> bool:
        return shard.owns(namespace, str(spec.get("cluster") or "")) and shard.labelled(labels)

    # The shard filter sits on every resource handler: kopf adds finalizers, starts daemons and runs
    # teardown only for the objects this shard owns and holds the label of (the watches select that label
    # on the server; the filter keeps it so against a server that would not). Event handlers also see
    # the DELETED that a tenant leaving the selection brings: the server sends it with the old labels.
    kinds = dict(group=GROUP, version=VERSION, registry=registry)
    clusters = dict(plural="tenantclusters", when=held_cluster, **kinds)
    pools = dict(plural="nodepools", when=held_pool, **kinds)
    cluster_events = dict(plural="tenantclusters", when=owned_cluster, **kinds)
    pool_events = dict(plural="nodepools", when=owned_pool, **kinds)

    @kopf.on.startup(registry=registry)
    async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure_kopf(settings, shard)
        if ctx.settings.webhook is not None:
            settings.admission.server = _webhook_server(ctx.settings.webhook)
        await ctx.start()

    @kopf.on.cleanup(registry=registry)
    async def close(**_: Any) -> None:
        """Stopped by a signal, kopf 1.45 leaves its waiter on the stop flag pending and gives it 5 s as a
        hung task before cancelling it: every SIGTERM took 5.2 s. Setting the flag ends the waiter."""
        await ctx.stop()
        ctx.stop_flag.set()

    @kopf.on.login(registry=registry)
    async def login(**_: Any) -> kopf.AiohttpSession:
        """kopf's watches use the credentials our client would send now, over a bounded pool; after a 401
        kopf closes the session and asks again."""
        info = await ctx.connection.login()
        return bounded_session(kopf.ConnectionInfo(**info, scheme="Bearer" if info["token"] else None))

    @kopf.daemon(**clusters, cancellation_timeout=PASSES_END_WITHIN)  # type: ignore[arg-type]
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
                        await _first(wakeup.wait(), stopped.wait())

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
            await _until_done(ctx, TENANT_CLUSTERS, namespace, name, lambda: tear_down(dict(body), namespace, name))
        elif _needs_pass(body) and ctx.triggers.wakes((namespace, name), body):
            ctx.wake((namespace, name))

    @kopf.on.event(**pool_events, id="pool_changed")  # type: ignore[arg-type]
    async def pool_changed(event: kopf.RawEvent, body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        deleted = event["type"] == "DELETED"
        if not deleted and not shard.labelled(body.metadata.labels):
            return
        if not deleted and orphaned(body, own):
            await _until_done(ctx, NODE_POOLS, namespace, name, lambda: pool_gone(body, namespace, name))
            return
        cluster = (body.get("spec") or {}).get("cluster")
        if not _needs_pass(body) or not cluster or body.get("metadata", {}).get("deletionTimestamp"):
            return
        if (namespace, str(cluster)) in ctx.watched:
            if ctx.triggers.wakes((namespace, str(cluster)), body):
                ctx.wake((namespace, str(cluster)))
        elif await ctx.api.get(TENANT_CLUSTERS, str(cluster), namespace) is None:
            await _write_status(ctx.api, NODE_POOLS, body, _orphan_status(body, namespace, str(cluster)))

    async def pool_gone(body: kopf.Body, namespace: str, name: str) -> None:
        """Prune the pool's objects through a pass of its cluster that no longer sees the pool."""
        cluster = (body.get("spec") or {}).get("cluster")
        ctx.triggers.forget("NodePool", namespace, name)
        if cluster:
            await run_pass(ctx, namespace, str(cluster), excluding_pool=name)
        await release(ctx.api, NODE_POOLS, namespace, name, own)

    if shard.count > 1:
        _register_misplaced(ctx, registry)

    @kopf.on.delete(**pools)  # type: ignore[arg-type]
    async def pool_deleted(body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        await pool_gone(body, namespace, name)

    async def tear_down(raw: dict[str, Any], namespace: str, name: str) -> None:
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
        await release(api, TENANT_CLUSTERS, namespace, name, own)

    @kopf.on.delete(**clusters)  # type: ignore[arg-type]
    async def cluster_deleted(body: kopf.Body, namespace: str, name: str, **_: Any) -> None:
        await tear_down(dict(body), namespace, name)

    if ctx.settings.webhook is not None:
        _register_admission(ctx, registry)
    return registry


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
        kamaji = await kamaji_release(ctx, ctx.api, await ctx.platform.settings(ctx.api))
        verdict = await review(ctx.api, TENANT_CLUSTERS, NODE_POOLS, operation, new, old, kamaji, ctx.derived)
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


async def _until_done(
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


async def _first(*aws: Any) -> None:
    tasks = [asyncio.ensure_future(a) for a in aws]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for t in tasks:
            t.cancel()
