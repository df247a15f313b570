"""Changing the shard count: the owner under the running layout takes over each tenant's finalizer and
label, and a tenant holding only the finalizer of a layout no longer running is still torn down and goes."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import pytest
from kube_emulator import Fault, KubeEmulator
from operator_support import FAST, before_first_write, eventually, management, operator_thread, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.settings import RetryPolicy
from tenantctl.operator.config.sharding import SHARD_LABEL, Shard, shard_of
from tenantctl.operator.kube.cache import WatchCache
from tenantctl.operator.kube.client import Connection, KubeClient, Resource
from tenantctl.operator.runtime.finalizers import (
    finalizer_of,
    is_teardown_finalizer,
    orphaned,
    release,
    take_over,
    taken_over,
)
from tenantctl.operator.runtime.handlers import OperatorContext

# Real time (each shard runs on a loop of its own, which looptime does not drive): a short resync keeps
# the waits on passes short.
pytestmark = [pytest.mark.timeout(60)]

TC = "tenantctl.io/v1alpha1/tenantclusters"
NP = "tenantctl.io/v1alpha1/nodepools"
CLUSTERS = Resource("tenantctl.io/v1alpha1", "TenantCluster", "tenantclusters", True)
POOLS = Resource("tenantctl.io/v1alpha1", "NodePool", "nodepools", True)
NAMESPACES = [f"tenant-{i}" for i in range(5)]
RESYNC = 1.0
OTHERS = "example.com/keep-me"


def seed(mgmt: KubeEmulator, finalizers: list[str] | None = None) -> None:
    """The kubevirt example (a cluster `demo`, pools `md0` and `big`) in every namespace."""
    management(mgmt)
    for namespace in NAMESPACES:
        docs = copy.deepcopy(load_example("kubevirt.yaml"))
        for d in docs:
            d["metadata"]["namespace"] = namespace
            if finalizers is not None:
                d["metadata"]["finalizers"] = list(finalizers)
        seed_documents(mgmt, docs)


def objects(mgmt: KubeEmulator) -> list[tuple[str, tuple[str, str], str]]:
    """(plural, key, owning cluster) of every TenantCluster and NodePool whose cluster is there to stay.

    Finalizers are taken over by the cluster's passes; a pool without one, only at its own deletion.
    """
    found: list[tuple[str, tuple[str, str], str]] = []
    for plural, path in (("tenantclusters", TC), ("nodepools", NP)):
        for body in mgmt.live(plural):
            meta = body["metadata"]
            cluster = meta["name"] if plural == "tenantclusters" else body["spec"]["cluster"]
            owner_body = mgmt.get(TC, meta["namespace"], cluster)
            if owner_body is not None and not owner_body["metadata"].get("deletionTimestamp"):
                found.append((path, (meta["namespace"], meta["name"]), cluster))
    return found


def teardown_finalizers(mgmt: KubeEmulator, path: str, key: tuple[str, str]) -> list[str]:
    body = mgmt.get(path, *key) or {"metadata": {}}
    return [f for f in body["metadata"].get("finalizers") or [] if is_teardown_finalizer(f)]


def owner(namespace: str, cluster: str, count: int) -> str:
    return finalizer_of(Shard(shard_of(namespace, cluster, count), count))


def shard_label(mgmt: KubeEmulator, path: str, key: tuple[str, str]) -> str | None:
    body = mgmt.get(path, *key) or {"metadata": {}}
    return (body["metadata"].get("labels") or {}).get(SHARD_LABEL)


def settled(mgmt: KubeEmulator, count: int) -> list[Any]:
    """What still holds anything but its owner's finalizer under `count` shards, or (sharded) another
    label than its owner's (empty: settled). The single shard labels nothing."""
    return [
        (key, teardown_finalizers(mgmt, path, key), shard_label(mgmt, path, key))
        for path, key, cluster in objects(mgmt)
        if teardown_finalizers(mgmt, path, key) != [owner(key[0], cluster, count)]
        or (count > 1 and shard_label(mgmt, path, key) != Shard(shard_of(key[0], cluster, count), count).label)
    ]


@contextlib.asynccontextmanager
async def layout(mgmt: KubeEmulator, count: int) -> AsyncIterator[list[OperatorContext]]:
    """Every shard of `count`, running until the block ends."""
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(
                operator_thread(mgmt, dataclasses.replace(FAST, shard=Shard(i, count), resync_interval=RESYNC))
            )
            for i in range(count)
        ]


async def delete(mgmt: KubeEmulator, res: Resource, namespace: str, name: str) -> None:
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        await api.delete(res, name, namespace)


def torn_down(mgmt: KubeEmulator, namespace: str) -> bool:
    """Torn down to the last step and released by us: gone, or held only by another controller's finalizer."""
    if teardown_finalizers(mgmt, TC, (namespace, "demo")):
        return False
    last = mgmt.objects[TC, namespace, "demo"].last.raw
    steps = ((last.get("status") or {}).get("teardown") or {}).get("steps") or []
    return any(s["step"] == "Finalizer" for s in steps)


def test_each_layout_names_its_shards_finalizers_and_the_single_shard_keeps_the_old_name() -> None:
    assert finalizer_of(Shard(0, 1)) == "tenantctl.io/teardown"
    assert finalizer_of(Shard(2, 3)) == "tenantctl.io/teardown-shard-2-of-3"
    assert finalizer_of(Shard(2, 3)) != finalizer_of(Shard(2, 4)), "two layouts must never share a name"


@pytest.mark.parametrize(
    "name", ["tenantctl.io/teardown", "tenantctl.io/teardown-shard-1", "tenantctl.io/teardown-shard-1-of-2"]
)
def test_every_teardown_finalizer_tenantctl_ever_used_is_recognised(name: str) -> None:
    assert is_teardown_finalizer(name)


@pytest.mark.parametrize(
    "name", ["example.com/teardown", "tenantctl.io/teardownx", "tenantctl.io/other", "tenantctl.io/teardown-shard-"]
)
def test_nobody_elses_finalizer_is_taken_for_ours(name: str) -> None:
    assert not is_teardown_finalizer(name)


def test_only_a_tenant_being_deleted_with_another_layouts_finalizer_alone_is_orphaned() -> None:
    """A live tenant that still holds only the old layout's finalizer is taken over by its pass, never torn
    down (the write-count bound of the two-layout test sees this only when the loop runs fast enough)."""
    own, old = finalizer_of(Shard(0, 2)), "tenantctl.io/teardown"
    live = {"metadata": {"finalizers": [old]}}
    deleting = {"metadata": {"finalizers": [old], "deletionTimestamp": "2026-12-07T00:00:00Z"}}
    assert not orphaned(live, own)
    assert orphaned(deleting, own)
    assert not orphaned({"metadata": {**deleting["metadata"], "finalizers": [old, own]}}, own), "ours: tear down here"
    assert not orphaned({"metadata": {**deleting["metadata"], "finalizers": ["other.io/x"]}}, own)


def test_taking_over_replaces_only_tenantctl_teardown_finalizers_in_place() -> None:
    own = finalizer_of(Shard(0, 2))
    seen = ["a.io/x", "tenantctl.io/teardown", "b.io/y", "tenantctl.io/teardown-shard-2-of-3"]
    assert taken_over(seen, own) == ["a.io/x", own, "b.io/y"]
    assert taken_over([own, "tenantctl.io/teardown"], own) == [own]


async def test_shrinking_three_shards_to_two_hands_every_tenant_to_its_new_owner_and_deletion_completes(
    mgmt: KubeEmulator,
) -> None:
    """Adopted tenants and pools end with their new owner's finalizer (another controller's kept); those
    deleted while no shard ran, holding only the old layout's finalizer, are torn down and go."""
    seed(mgmt)
    kept, orphans = NAMESPACES[-1], NAMESPACES[:2]
    for namespace in (kept, orphans[1]):
        body = mgmt.get(TC, namespace, "demo")
        assert body is not None
        mgmt.put(TC, {**body, "metadata": {**body["metadata"], "finalizers": [OTHERS]}})
    async with layout(mgmt, 3):
        await eventually(lambda: not settled(mgmt, 3), timeout=30)
    for namespace in orphans:
        await delete(mgmt, CLUSTERS, namespace, "demo")
    await delete(mgmt, POOLS, NAMESPACES[2], "md0")
    assert all(mgmt.get(TC, ns, "demo") is not None for ns in orphans), "the old layout's finalizers hold them"
    async with layout(mgmt, 2):
        await eventually(lambda: all(torn_down(mgmt, ns) for ns in orphans), timeout=30)
        await eventually(lambda: mgmt.get(NP, NAMESPACES[2], "md0") is None, timeout=30)
        await eventually(lambda: not settled(mgmt, 2), timeout=30)
        assert (mgmt.get(TC, kept, "demo") or {})["metadata"]["finalizers"][0] == OTHERS, "not ours: kept in place"
        assert (mgmt.get(TC, orphans[1], "demo") or {})["metadata"]["finalizers"] == [OTHERS], "released, not ours"
        await delete(mgmt, POOLS, orphans[0], "big")  # its cluster is gone: only its deletion takes it over
        await delete(mgmt, CLUSTERS, NAMESPACES[2], "demo")
        await eventually(lambda: mgmt.get(NP, orphans[0], "big") is None, timeout=30)
        await eventually(lambda: torn_down(mgmt, NAMESPACES[2]), timeout=30)


async def test_two_layouts_running_at_once_exchange_finalizers_once_per_pass_and_settle_when_one_stops(
    mgmt: KubeEmulator,
) -> None:
    """A rolling change from one shard (whose tenants still hold index-only names) to two: both layouts
    own every moving tenant; neither loops on the other's writes, a deletion completes, and once the
    old layout stops each tenant keeps its new owner's finalizer alone."""
    seed(mgmt, ["tenantctl.io/teardown-shard-1", "tenantctl.io/teardown"])
    async with contextlib.AsyncExitStack() as old_layout:
        old = await old_layout.enter_async_context(layout(mgmt, 1))
        await eventually(lambda: not settled(mgmt, 1), timeout=30)
        async with layout(mgmt, 2) as new:
            owners = [*old, *new]
            keys = [(namespace, "demo") for namespace in NAMESPACES]
            await eventually(lambda: all(sum(ctx.passes[k] for ctx in owners) >= 2 for k in keys), timeout=30)
            since, before = len(mgmt.write_requests), {k: sum(ctx.passes[k] for ctx in owners) for k in keys}
            await asyncio.sleep(5 * RESYNC)
            writes = [w for w in mgmt.write_requests[since:] if w[1] == "tenantclusters"]
            for key in keys:
                passes = sum(ctx.passes[key] for ctx in owners) - before[key]
                mine = [w for w in writes if (w[2], w[3]) == key]
                # Per pass: its status, its take-over and the other kopf putting its own back; a pass of
                # each layout may straddle either end of the window.
                assert len(mine) <= 3 * (passes + 2), f"{key}: {len(mine)} writes for {passes} passes"
            await delete(mgmt, CLUSTERS, NAMESPACES[0], "demo")
            await eventually(lambda: torn_down(mgmt, NAMESPACES[0]), timeout=30)
            await old_layout.aclose()
            await eventually(lambda: not settled(mgmt, 2), timeout=30)


def label_writes(mgmt: KubeEmulator, since: int) -> dict[tuple[str, str], int]:
    """Per TenantCluster, the shard-label changes journalled after `since`."""
    found: dict[tuple[str, str], int] = {}
    for entry in mgmt.journal[since:]:
        if entry.plural == "tenantclusters" and entry.verb == "patch" and "add /metadata/labels" in entry.fields:
            key = (entry.namespace or "", entry.name)
            found[key] = found.get(key, 0) + 1
    return found


async def test_each_shard_watches_its_own_label_on_the_server_and_labels_the_tenants_it_owns(
    mgmt: KubeEmulator,
) -> None:
    """Tenants created unlabelled are labelled by their owner alone; kopf's watches of TenantClusters and
    NodePools select the shard's label, so no shard reconciles, or even receives, another's tenant."""
    seed(mgmt)
    async with layout(mgmt, 2) as shards:
        await eventually(lambda: not settled(mgmt, 2), timeout=30)
        await eventually(lambda: all(sum(c.passes[(ns, "demo")] for c in shards) for ns in NAMESPACES), timeout=30)
        for i, ctx in enumerate(shards):
            assert {k for k in ctx.passes} == {(ns, "demo") for ns in NAMESPACES if shard_of(ns, "demo", 2) == i}
            assert ctx.claims is not None
        assert sum(c.claims.labelled for c in shards if c.claims) == len(objects(mgmt)), "one label each, by its owner"
    for plural in ("tenantclusters", "nodepools"):
        selectors = {expr for p, expr in mgmt.watches if p == plural}
        assert {f"{SHARD_LABEL}=0-of-2", f"{SHARD_LABEL}=1-of-2"} <= selectors, plural
        assert "" in selectors, "the watch cache holds every tenant whole, for the admission webhook"
        assert f"!{SHARD_LABEL}" in selectors, "and the unlabelled are watched, to be claimed"


async def test_a_label_edited_by_hand_goes_back_to_the_owner_and_the_shard_it_named_lets_go(
    mgmt: KubeEmulator,
) -> None:
    seed(mgmt)
    async with layout(mgmt, 2) as shards:
        await eventually(lambda: not settled(mgmt, 2), timeout=30)
        namespace = NAMESPACES[0]
        mine = shard_of(namespace, "demo", 2)
        other = Shard(1 - mine, 2)
        await eventually(lambda: shards[mine].passes[(namespace, "demo")] >= 1, timeout=30)
        body = mgmt.get(TC, namespace, "demo")
        assert body is not None
        mgmt.put(TC, {**body, "metadata": {**body["metadata"], "labels": {SHARD_LABEL: other.label}}})
        await eventually(lambda: shard_label(mgmt, TC, (namespace, "demo")) == Shard(mine, 2).label, timeout=30)
        await eventually(lambda: not settled(mgmt, 2), timeout=30)
        assert (namespace, "demo") not in shards[1 - mine].passes, "the shard it named never reconciled it"
        passes = shards[mine].passes[(namespace, "demo")]
        await eventually(lambda: shards[mine].passes[(namespace, "demo")] > passes, timeout=30)


async def test_two_sharded_layouts_at_once_move_a_tenant_at_most_once_per_sweep_each_and_settle(
    mgmt: KubeEmulator,
) -> None:
    """Three shards and two side by side: each layout's sweep takes its tenants once per resync interval,
    never on the other's write (no loop), one shard at a time holds each label; when the old stops, the
    new settles every tenant."""
    seed(mgmt)
    async with contextlib.AsyncExitStack() as old_layout:
        await old_layout.enter_async_context(layout(mgmt, 3))
        await eventually(lambda: not settled(mgmt, 3), timeout=30)
        async with layout(mgmt, 2):
            await asyncio.sleep(RESYNC)
            since = len(mgmt.journal)
            await asyncio.sleep(5 * RESYNC)
            moved = label_writes(mgmt, since)
            assert set(moved) == {(ns, "demo") for ns in NAMESPACES}, "both layouts' sweeps take their tenants"
            for key, writes in moved.items():
                # each layout's sweep at most once per interval, and one straddling either end of the window
                assert writes <= 2 * (5 + 2), f"{key}: {writes} label writes in 5 intervals"
            await old_layout.aclose()
            await eventually(lambda: not settled(mgmt, 2), timeout=30)
            since = len(mgmt.journal)
            await asyncio.sleep(3 * RESYNC)
            assert not label_writes(mgmt, since), "settled: no label moves once the old layout is gone"


async def test_a_tenant_another_layout_takes_ends_its_reconciler_here_at_once_not_at_the_next_resync(
    mgmt: KubeEmulator,
) -> None:
    """Relabelled by a shard of another layout, the tenant arrives DELETED on this shard's selected watch:
    its reconciler stops there, so two shards never run passes of it side by side for a resync interval."""
    seed(mgmt)
    slow = dataclasses.replace(FAST, shard=Shard(0, 2), resync_interval=60.0, requeue_delay=60.0)
    mine = [ns for ns in NAMESPACES if shard_of(ns, "demo", 2) == 0]
    async with operator_thread(mgmt, slow) as ctx:
        await eventually(lambda: all(ctx.passes[(ns, "demo")] >= 1 for ns in mine), timeout=30)
        body = mgmt.get(TC, mine[0], "demo")
        assert body is not None
        mgmt.put(TC, {**body, "metadata": {**body["metadata"], "labels": {SHARD_LABEL: Shard(0, 3).label}}})
        await eventually(lambda: (mine[0], "demo") not in ctx.watched, timeout=10)
        assert all((ns, "demo") in ctx.watched for ns in mine[1:]), "the others stay"


async def test_a_release_ends_only_the_running_reconciler_and_a_newer_one_takes_over() -> None:
    """The bookkeeping behind a tenant leaving and coming back: a release marks only a key whose
    reconciler runs (a tenant long gone leaves nothing behind), a newer reconciler of the key supersedes
    the older, and the mark goes with the reconciler."""
    ctx = OperatorContext(Connection.from_server("http://127.0.0.1:1"))
    key = ("tenant-0", "demo")
    ctx.release(key)
    assert key not in ctx.released, "no reconciler runs: nothing to mark"
    with ctx.watching(key) as older:
        assert ctx.serving(key, older)
        with ctx.watching(key) as newer:
            assert older.is_set() and not ctx.serving(key, older) and ctx.serving(key, newer)
            ctx.release(key)
            assert newer.is_set() and not ctx.serving(key, newer)
        assert key not in ctx.released and key not in ctx.watched
    assert key not in ctx.watched


async def test_a_take_over_refused_every_time_gives_up_after_the_retry_budget_and_leaves_it_to_the_next_pass(
    mgmt: KubeEmulator,
) -> None:
    """Each refusal is read again and retried, but only as often as the client's backoffs allow: another
    layout's kopf that keeps changing the finalizers costs this pass a bounded number of writes, never a
    loop, and no failure (the next pass tries again)."""
    seed(mgmt, ["tenantctl.io/teardown"])
    namespace, patches = NAMESPACES[0], 0

    async def other_layout_first(method: str, plural: str) -> None:
        """Before each of our patches lands, the old layout's kopf has put a finalizer of its own back."""
        nonlocal patches
        if method == "PATCH" and plural == "tenantclusters":
            patches += 1
            body = mgmt.get(TC, namespace, "demo")
            assert body is not None
            old_layouts = ["tenantctl.io/teardown", f"tenantctl.io/teardown-shard-{patches % 3}-of-3"]
            body["metadata"]["finalizers"] = old_layouts
            mgmt.put(TC, body)

    mgmt.before_write = other_layout_first
    retry = RetryPolicy(backoffs=(0.01, 0.02, 0.03))
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/")), retry=retry) as api:
        body = await api.get(CLUSTERS, "demo", namespace)
        assert body is not None
        assert await take_over(api, CLUSTERS, body, finalizer_of(Shard(0, 2))) is False
    assert patches == len(retry.backoffs) + 1


async def test_a_take_over_refused_for_another_reason_than_a_change_is_logged_and_not_retried(
    mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    """A 422 with the finalizers as read is not the race the retry is for (a validation rule, say):
    retrying it would only stall the pass. It is said, and left to the next pass."""
    seed(mgmt, ["tenantctl.io/teardown"])
    refused = Fault("PATCH", "tenantclusters", status=422, times=10**9, message="a rule refused it")
    mgmt.faults.append(refused)
    retry = RetryPolicy(backoffs=(5.0, 5.0, 5.0))
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/")), retry=retry) as api:
        body = await api.get(CLUSTERS, "demo", NAMESPACES[0])
        assert body is not None
        async with asyncio.timeout(2):  # no backoff waited
            assert await take_over(api, CLUSTERS, body, finalizer_of(Shard(0, 2))) is False
    assert 10**9 - refused.times == 1
    assert f"TenantCluster {NAMESPACES[0]}/demo" in caplog.text and "a rule refused it" in caplog.text
    assert mgmt.get(TC, NAMESPACES[0], "demo")["metadata"]["finalizers"] == ["tenantctl.io/teardown"]


async def test_a_refused_take_over_is_read_again_from_the_server_not_from_the_cache_that_was_behind(
    mgmt: KubeEmulator,
) -> None:
    """The copy the pass exchanged from came from the watch cache, which had not seen kopf's add yet: the
    retry must ask the server, whatever the cache holds by then."""
    seed(mgmt, ["tenantctl.io/teardown"])
    namespace, own = NAMESPACES[0], finalizer_of(Shard(0, 2))
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/")), cache=WatchCache()) as api:
        stale = await api.get(CLUSTERS, "demo", namespace)
        assert stale is not None and mgmt.named_reads["tenantclusters", namespace, "demo"] == 0, "the cache answered"
        live = mgmt.get(TC, namespace, "demo")
        assert live is not None
        live["metadata"]["finalizers"].append(own)  # kopf adds the owner's
        mgmt.put(TC, live)
        assert await take_over(api, CLUSTERS, stale, own)
        assert mgmt.named_reads["tenantclusters", namespace, "demo"] == 1, "the retry read the server"
    assert (mgmt.get(TC, namespace, "demo") or {})["metadata"]["finalizers"] == [own]


async def test_a_refused_release_reads_the_server_again_not_the_cache(mgmt: KubeEmulator) -> None:
    """A torn-down tenant's release of the old layouts' finalizers, refused because they changed since the
    cache's copy: the retry reads the server (a cache that is behind would refuse every retry, fail the
    teardown handler and leave it to kopf's retry a minute later)."""
    seed(mgmt, ["tenantctl.io/teardown"])
    namespace, own = NAMESPACES[0], finalizer_of(Shard(0, 2))

    async def kopf_adds_its_own_first() -> None:
        body = mgmt.get(TC, namespace, "demo")
        assert body is not None
        body["metadata"]["finalizers"] = ["tenantctl.io/teardown", own]
        mgmt.put(TC, body)

    before_first_write(mgmt, "PATCH", "tenantclusters", kopf_adds_its_own_first)
    retry = RetryPolicy(backoffs=(0.01, 0.02))
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/")), retry=retry, cache=WatchCache()) as api:
        await release(api, CLUSTERS, namespace, "demo", own)
    assert mgmt.named_reads["tenantclusters", namespace, "demo"] == 1, "the retry read the server"
    assert (mgmt.get(TC, namespace, "demo") or {})["metadata"]["finalizers"] == [own]
