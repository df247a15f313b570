"""What every handler shares: the management connection, one client, per-cluster wake-ups and locks,
the passes in flight, and the start and stop of all of it."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import kopf

from tenantctl.operator.config.identity import Subject
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.kube.cache import WatchCache
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.operator.kube.tenants import TenantClients
from tenantctl.operator.phases.apply import Verified
from tenantctl.operator.phases.derived import DerivedJudge
from tenantctl.operator.phases.events import object_logger
from tenantctl.operator.phases.platform import PlatformReader
from tenantctl.operator.phases.talos_api import KamajiSchema
from tenantctl.operator.runtime.claims import Claims, cluster_of_cluster, cluster_of_pool
from tenantctl.operator.runtime.metrics import Metrics
from tenantctl.operator.runtime.triggers import Triggers
from tenantctl.redaction import redact

if TYPE_CHECKING:
    from aiohttp import web
from tenantctl.operator.runtime.cache_scope import (
    HELD_WHOLE,
    LIST_PAGE_SIZE,
    OWNED,
    inventory_of,
    other_controllers_objects_of,
    tenants_in_full_of,
)
from tenantctl.operator.runtime.kinds import NODE_POOLS, TENANT_CLUSTERS, Key


class KopfRecorder:
    """Log with the `[ns/name]` prefix and post the same line as an Event on the object."""

    def __init__(self, body: Mapping[str, Any]) -> None:
        meta = body["metadata"]
        self._body = body
        self._log = object_logger(meta.get("namespace", ""), meta["name"])

    def info(self, reason: str, message: str) -> None:
        message = redact(message)
        self._log.info(message)
        kopf.info(self._body, reason=reason, message=message)  # type: ignore[arg-type]

    def warn(self, reason: str, message: str) -> None:
        message = redact(message)
        self._log.warning(message)
        kopf.warn(self._body, reason=reason, message=message)  # type: ignore[arg-type]



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

    _identity: Subject | None = None

    async def identity(self) -> Subject:
        """Who the API server says the operator is, asked once: its tenant role is bound to that."""
        if self._identity is None:
            self._identity = Subject.of_username(await self.api.whoami())
        return self._identity

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

