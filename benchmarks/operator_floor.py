"""The floor under the operator's create CPU: kopf and our HTTP client sending the very requests a run of
the operator's passes sent, with nothing rendered, validated, compared or cached.

`operator_real_scale.py --floor` records what the operator sent (the API server's audit at level Request
gives each request's verb, object and body; each tenant's emulated API keeps what was applied inside), then
starts a fresh management cluster holding the same world and spawns this in the operator's place:
- kopf with the operator's settings (its finalizer, annotation progress storage, no diff-base, the bounded
  pool of its session, its handler-outcome lines at DEBUG) and the operator's set of handlers with empty
  bodies: a daemon per TenantCluster, delete handlers on TenantClusters and NodePools (what makes kopf add
  its finalizer to both), event handlers on TenantClusters, NodePools and Platforms, each with a filter,
  so kopf dispatches each watch event as it does for the operator;
- each daemon sends its tenant's recorded requests once, in order, through `KubeClient`'s own verbs — the
  management API's, then the tenant's own API's after a probe — at most `concurrent_passes` tenants at
  once, as the operator's gate bounds its passes.
The watch cache's lists are not replayed (the cache is the operator's side of the subtraction), and the
product is imported whole, as the operator imports it, so both figures carry the same process start.

The `bare` engine splits the floor: no kopf at all, a task per tenant sending kopf's recorded finalizer
patches itself before the rest of the tenant's requests, so what the `kopf` engine costs over it is
kopf's: its watches, its processing of each event, its daemons.

A recorded request the operator's client retried (a 409, 429 or 5xx, or kopf's lost test) is sent again
with its retry, and the client may retry on its own: either shows as an answer or a count apart from the
operator's, and the run fails its check rather than measure something else. None happened in the runs
recorded in docs/performance.md.

What this costs per tenant is what an operator built on kopf and this client pays for those requests; the
operator's figure over it is what its passes' own work and its watch cache add. It is a floor, not a
model: it knows each tenant's API address without reading the kubeconfig Secret.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import resource
import time
from collections import Counter
from pathlib import Path
from typing import Any

import kopf
from operator_driver import log_to

from tenantctl.collector import tune_collector
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.client import APIError, Connection, KubeClient, Resource
from tenantctl.operator.kube.tenants import tenant_client
from tenantctl.operator.runtime.event_loop import run_in_loop
from tenantctl.operator.runtime.handlers import GROUP, VERSION, configure_kopf
from tenantctl.operator.runtime.kopf_session import bounded_session

__all__ = ["ENGINES", "REPLAYED", "Replay", "Sent", "floor_worker", "sent"]

Sent = dict[str, Any]
"""One recorded request: `verb`, `api_version`, `plural`, `namespace`, `name`, `subresource`, `body`, `uri`,
and the `code` the operator was answered."""

Replay = dict[str, Any]
"""Per tenant namespace: `management` (Sent, in order), `inside` (objects applied in its API), `url`, and
`kopf` (kopf's finalizer patches, Sent, which only the `bare` engine sends)."""


REPLAYED = frozenset({"get", "create", "patch", "delete"})
"""The verbs the floor sends again; a watch or a list is the watch cache's (or kopf's), not a pass's."""


def sent(event: dict[str, Any]) -> Sent | None:
    """The request an audit event (level Request) records, as the client's verbs take it; None for one the
    floor does not send (a watch, a list). A discovery read has no resource: it is sent by its URI."""
    ref = event.get("objectRef") or {}
    if event["verb"] not in REPLAYED:
        return None
    version = ref.get("apiVersion", "v1")
    group = ref.get("apiGroup")
    return {
        "verb": event["verb"],
        "api_version": f"{group}/{version}" if group else version,
        "plural": ref.get("resource", ""),
        "namespace": ref.get("namespace"),
        "name": ref.get("name"),
        "subresource": ref.get("subresource"),
        "body": event.get("requestObject"),
        "uri": event["requestURI"],
        "code": (event.get("responseStatus") or {}).get("code", 200),
    }


async def _send(api: KubeClient, request: Sent) -> None:
    """Through the verb the operator's pass calls: its encoding and content type. (The Events kopf's poster
    sends for the operator go through `create` here, one a tenant.)"""
    res = Resource(request["api_version"], "", request["plural"], request["namespace"] is not None)
    body, name, namespace = request["body"], request["name"], request["namespace"]
    if request["subresource"] not in (None, "status"):
        raise ValueError(f"no verb of the client sends {request['verb']} {request['uri']}")
    status = request["subresource"] == "status"
    verb = request["verb"]
    if verb == "get":
        await api.call("GET", request["uri"])
    elif verb == "patch" and isinstance(body, list):
        await api.json_patch(res, name, namespace, body, status=status)
    elif verb == "patch" and "fieldManager=" in request["uri"] and "apiVersion" in body:
        await api.apply(res, body)
    elif verb == "patch":
        await api.merge_patch(res, name, namespace, body, status=status)
    elif verb == "create":
        await api.create(res, body)
    elif verb == "delete":  # by its URI: `delete` answers a 404 as False, and the 404 must be compared
        await api.call("DELETE", request["uri"])
    else:
        raise ValueError(f"no verb of the client sends {verb} {request['uri']}")


def _unconditional(request: Sent) -> Sent:
    """kopf's finalizer patch without its test of the resourceVersion kopf had seen: on a fresh cluster that
    version is another, and kopf (which knows the current one from its watch) is not there to say it."""
    ops = request["body"]
    if not isinstance(ops, list):
        return request
    kept = [op for op in ops if not (op.get("op") == "test" and op.get("path") == "/metadata/resourceVersion")]
    return {**request, "body": kept}


class _Floor:
    """The replay's state in the child: what each tenant sends, and what has been sent."""

    def __init__(self, replay: dict[str, Replay], connection: Connection, settings: OperatorSettings) -> None:
        self.replay, self.connection, self.settings = replay, connection, settings
        self.passes: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        """Answers the operator was not given (a refusal it was not given, or a success where it was refused):
        the replay is not what it sent when this is not empty."""
        self.gate = asyncio.Semaphore(settings.concurrent_passes)
        self.api: KubeClient | None = None
        self.inside: list[KubeClient] = []

    def management_client(self) -> KubeClient:
        """The operator's client to the management API as the operator makes it, without its cache and metrics
        (the operator's side of the subtraction); both engines send through one."""
        return KubeClient(self.connection, field_manager=self.settings.field_manager, retry=self.settings.retry)

    async def tenant(self, namespace: str, *, as_kopf: bool = False) -> None:
        """The tenant's requests; `as_kopf`: kopf's finalizer patches first, as kopf sends them before the
        daemon starts (the `bare` engine)."""
        assert self.api is not None
        plan = self.replay.get(namespace)
        if plan is None:
            return
        async with self.gate:
            try:
                for request in [*(map(_unconditional, plan["kopf"]) if as_kopf else ()), *plan["management"]]:
                    await self._answered(request)
                inside = await tenant_client(Connection.from_server(plan["url"]), self.settings).__aenter__()
                self.inside.append(inside)
                await inside.probe(self.settings.tenant_probe_timeout)
                for obj in plan["inside"]:
                    await inside.apply(await inside.require(obj["apiVersion"], obj["kind"]), obj)
            except Exception as exc:  # counted, never retried: kopf re-running the daemon would send it all again
                self.refused[f"{namespace}: {type(exc).__name__} {exc}"] += 1
            finally:
                self.passes[namespace] += 1

    async def _answered(self, request: Sent) -> None:
        assert self.api is not None
        what = f"{request['verb']} {request['plural'] or request['uri']}"
        try:
            await _send(self.api, request)
        except APIError as exc:
            if exc.status != request["code"]:
                self.refused[f"{what} {exc.status}, the operator {request['code']}"] += 1
            return
        if request["code"] >= 400:
            self.refused[f"{what} succeeded, the operator {request['code']}"] += 1


def _registry(floor: _Floor) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    kinds: dict[str, Any] = dict(group=GROUP, version=VERSION, registry=registry)

    @kopf.on.startup(registry=registry)
    async def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
        configure_kopf(settings, Shard())
        floor.api = await floor.management_client().__aenter__()

    @kopf.on.cleanup(registry=registry)
    async def close(**_: Any) -> None:
        for client in [*floor.inside, *([floor.api] if floor.api else [])]:
            await client.close()

    @kopf.on.login(registry=registry)
    async def login(**_: Any) -> kopf.AiohttpSession:
        info = await floor.connection.login()
        return bounded_session(kopf.ConnectionInfo(**info, scheme="Bearer" if info["token"] else None))

    def held(**_: Any) -> bool:
        """Where the operator filters by shard (its single shard holds everything)."""
        return True

    clusters: dict[str, Any] = dict(plural="tenantclusters", when=held, **kinds)
    pools: dict[str, Any] = dict(plural="nodepools", when=held, **kinds)

    @kopf.daemon(**clusters)
    async def reconciler(stopped: kopf.DaemonStopped, namespace: str, **_: Any) -> None:
        await floor.tenant(namespace)
        await stopped.wait()

    @kopf.on.event(GROUP, VERSION, "platforms", id="platform_changed", registry=registry)
    async def platform_changed(**_: Any) -> None:
        """The operator's wakes every tenant on an edit of its Platform; none is edited in the run."""

    @kopf.on.event(**clusters, id="cluster_changed")
    async def cluster_changed(**_: Any) -> None:
        """The operator's wakes a pass on a change that needs one; the floor's passes run once."""

    @kopf.on.event(**pools, id="pool_changed")
    async def pool_changed(**_: Any) -> None:
        """As `cluster_changed`, for NodePools."""

    @kopf.on.delete(**pools)
    async def pool_deleted(**_: Any) -> None:
        """Never called here; held so that kopf adds its finalizer, as it does for the operator."""

    @kopf.on.delete(**clusters)
    async def cluster_deleted(**_: Any) -> None:
        """As `pool_deleted`, for TenantClusters."""

    return registry


ENGINES = ("kopf", "bare")


def floor_worker(pipe: Any, kubeconfig: dict[str, Any], replay_path: str, log: str, engine: str) -> None:
    """The floor as the parent drives it: `up` once it runs, then `converged` and `stop`."""
    log_to(log)
    run_in_loop(_floor(pipe, kubeconfig, Path(replay_path), engine))


async def _floor(pipe: Any, kubeconfig: dict[str, Any], replay_path: Path, engine: str) -> None:
    started = time.process_time()  # the interpreter and the imports: the process start all three runs pay
    replay: dict[str, Replay] = json.loads(replay_path.read_bytes())
    gc.freeze()  # the replay is the harness's: no collection walks it, as none walks it in the operator
    loading = time.process_time() - started
    loop = asyncio.get_running_loop()
    floor = _Floor(replay, Connection.from_kubeconfig(kubeconfig), OperatorSettings())
    stop, ready = asyncio.Event(), asyncio.Event()
    if engine == "kopf":
        task = asyncio.create_task(kopf.operator(registry=_registry(floor), clusterwide=True, standalone=True,
                                                 stop_flag=stop, ready_flag=ready))
    else:
        task = asyncio.create_task(_bare(floor, stop, ready))
    try:
        try:
            await asyncio.wait_for(ready.wait(), 30)
        except TimeoutError:
            pipe.send({"error": f"{engine} not running after 30 s (its log says why)"})
            return
        pipe.send("up")
        if await loop.run_in_executor(None, pipe.recv) != "converged":
            return
        try:
            async with asyncio.timeout(300):  # every tenant is Ready: what is left of a pass is inside its API
                while sum(floor.passes.values()) < len(replay):
                    await asyncio.sleep(0.01)
        except TimeoutError:
            pipe.send({"error": f"{sum(floor.passes.values())} of {len(replay)} tenants' requests sent after 300 s"})
            return
        pipe.send({"cpu": time.process_time() - loading, "loading": loading, "start": started,
                   "refused": dict(floor.refused), "passes": sum(floor.passes.values())})
        await loop.run_in_executor(None, pipe.recv)  # "stop"
    finally:
        stop.set()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(task, 120)
    pipe.send({"peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024})


async def _bare(floor: _Floor, stop: asyncio.Event, ready: asyncio.Event) -> None:
    """Every tenant's requests, kopf's finalizer patches included, from a task each: no engine at all."""
    tune_collector()
    async with floor.management_client() as api:
        floor.api = api
        tasks = [asyncio.create_task(floor.tenant(namespace, as_kopf=True)) for namespace in floor.replay]
        ready.set()
        await asyncio.gather(*tasks)
        await stop.wait()
        for client in floor.inside:
            await client.close()
