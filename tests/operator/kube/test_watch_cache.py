"""The watch cache against the emulator: reads answered from memory, changes arriving by watch, only
our objects and the ones asked for held, our writes visible at once, and a resource we may not list
read directly without polling."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator

import pytest
from kube_emulator import Fault, KubeEmulator
from operator_support import condition, eventually, management, running_operator, seed_control_plane, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.settings import RetryPolicy
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.cache import WatchCache, _Store
from tenantctl.operator.kube.client import Connection, KubeClient, Resource
from tenantctl.operator.runtime.handlers import OWNED, inventory_of
from tenantctl.render.meta import CLUSTER_LABEL, NAMESPACE_LABEL

pytestmark = [pytest.mark.timeout(20)]

SECRETS = Resource("v1", "Secret", "secrets", True)
TC = "tenantctl.io/v1alpha1/tenantclusters"


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def secret(name: str, value: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    meta = {"name": name, "namespace": "ns", "labels": labels or {}}
    return {"apiVersion": "v1", "kind": "Secret", "metadata": meta, "data": {"v": value}}


async def test_reads_come_from_the_watch_and_changes_arrive_by_it(mgmt: KubeEmulator) -> None:
    mgmt.put("v1/secrets", secret("a", "MQ==", {"app": "x"}))
    mgmt.put("v1/secrets", secret("unlabelled", "MQ=="))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache()) as api, \
            KubeClient(Connection.from_server(url(mgmt))) as other:
        assert (await api.get(SECRETS, "a", "ns") or {})["data"] == {"v": "MQ=="}
        reads = mgmt.reads
        for _ in range(5):
            assert await api.get(SECRETS, "a", "ns") is not None
            assert [s["metadata"]["name"] for s in await api.list(SECRETS, "ns", {"app": "x"})] == ["a"]
            assert await api.list(SECRETS, "other-ns") == []
        assert mgmt.reads == reads, "no request once the resource is watched"
        assert "watch v1/secrets" in {t.get_name() for t in asyncio.all_tasks()}, "a task dump names each watch"
        await other.merge_patch(SECRETS, "a", "ns", {"data": {"v": "Mg=="}})
        await eventually(lambda: api.cache is not None and
                         (api.cache.holds("v1", "secrets", "ns", "a") or {}).get("data") == {"v": "Mg=="})
        await other.delete(SECRETS, "a", "ns")
        await eventually(lambda: api.cache is not None and api.cache.holds("v1", "secrets", "ns", "a") is None)
        await api.apply(SECRETS, secret("b", "Mw=="))
        assert await api.get(SECRETS, "b", "ns") == mgmt.get("v1/secrets", "ns", "b"), "our write is read back at once"
        assert mgmt.reads == reads


async def test_a_resource_we_may_not_list_is_read_directly_without_polling(
    mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="tenantctl")
    mgmt.put("v1/secrets", secret("a", "MQ=="))
    mgmt.fail(Fault("GET", "secrets", status=403, times=1, message="forbidden"))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache(retry_delay=0.01)) as api:
        assert await api.get(SECRETS, "a", "ns") is not None
        reads = mgmt.reads
        await asyncio.sleep(0.3)
        assert mgmt.reads == reads, "a forbidden list is not retried in the background"
        assert await api.get(SECRETS, "a", "ns") is not None
        assert mgmt.reads == reads + 1, "each read asks the server"
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("reading secrets directly: ")]
    assert said and "403" in said[0], caplog.records


async def test_with_owned_labels_only_ours_and_the_objects_asked_for_are_held(mgmt: KubeEmulator) -> None:
    ours = {"managed-by": "us"}
    mgmt.put("v1/secrets", secret("ours", "MQ==", ours))
    mgmt.put("v1/secrets", secret("asked", "MQ=="))
    mgmt.put("v1/secrets", secret("other", "MQ=="))
    cache = WatchCache(owned=ours)
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api, \
            KubeClient(Connection.from_server(url(mgmt))) as other:
        assert [s["metadata"]["name"] for s in await api.list(SECRETS, "ns", ours)] == ["ours"]
        assert cache.holds("v1", "secrets", "ns", "other") is None, "another controller's Secret is not held"
        reads = mgmt.reads
        assert await api.get(SECRETS, "ours", "ns") is not None
        assert mgmt.reads == reads, "ours: from the watch"
        assert (await api.get(SECRETS, "asked", "ns") or {})["data"] == {"v": "MQ=="}
        assert mgmt.reads == reads + 1, "a name not held: read from the server once"
        await other.merge_patch(SECRETS, "asked", "ns", {"data": {"v": "Mg=="}})
        await eventually(lambda: (cache.holds("v1", "secrets", "ns", "asked") or {}).get("data") == {"v": "Mg=="})
        assert await api.get(SECRETS, "missing", "ns") is None
        await other.create(SECRETS, secret("missing", "Mw=="))
        await eventually(lambda: cache.holds("v1", "secrets", "ns", "missing") is not None)
        reads = mgmt.reads
        assert (await api.get(SECRETS, "asked", "ns") or {})["data"] == {"v": "Mg=="}
        assert await api.get(SECRETS, "missing", "ns") is not None
        assert mgmt.reads == reads, "then kept current by the watch"
        assert len(await api.list(SECRETS, "ns")) == 4 and mgmt.reads == reads + 1, "a list beyond ours asks"


def _pair_of_tenants() -> tuple[tuple[str, str], tuple[str, str]]:
    """Two tenants (namespace, cluster) that shard 0/2 and shard 1/2 own."""
    tenants = [(f"tenant-{i}", f"t{i}") for i in range(20)]
    return next(t for t in tenants if Shard(0, 2).owns(*t)), next(t for t in tenants if Shard(1, 2).owns(*t))


async def test_a_shard_holds_its_own_tenants_inventory_not_every_shards(mgmt: KubeEmulator) -> None:
    """Every shard watches every labelled object; a shard keeps only its own tenants' (and shared ones):
    else each shard's memory grows with all tenants, and sharding spreads CPU but not memory."""
    mine, theirs = _pair_of_tenants()
    for (namespace, cluster), name in ((mine, "mine"), (theirs, "theirs")):
        labels = {**OWNED, CLUSTER_LABEL: cluster}
        mgmt.put("v1/secrets", {**secret(name, "MQ==", labels), "metadata": {
            "name": name, "namespace": namespace, "labels": labels}})
    mgmt.put("v1/secrets", secret("shared", "MQ==", dict(OWNED)))
    cache = WatchCache(owned=OWNED, scope=inventory_of(Shard(0, 2)))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.get(SECRETS, "mine", mine[0]) is not None
        assert cache.holds("v1", "secrets", mine[0], "mine") is not None
        assert cache.holds("v1", "secrets", theirs[0], "theirs") is None, "another shard's tenant"
        assert cache.holds("v1", "secrets", "ns", "shared") is not None, "no tenant label: shared, held"
        reads = mgmt.reads
        assert await api.get(SECRETS, "theirs", theirs[0]) is not None
        assert mgmt.reads == reads + 1, "asked for by name: read once, then held"
        assert cache.holds("v1", "secrets", theirs[0], "theirs") is not None
    assert inventory_of(Shard()) is None, "a single shard holds everything labelled"


def test_a_cluster_scoped_object_belongs_to_the_tenant_its_namespace_label_names() -> None:
    mine, theirs = _pair_of_tenants()
    held = inventory_of(Shard(0, 2))
    assert held is not None
    assert held(None, {CLUSTER_LABEL: mine[1], NAMESPACE_LABEL: mine[0]})
    assert not held(None, {CLUSTER_LABEL: theirs[1], NAMESPACE_LABEL: theirs[0]})
    assert held(mine[0], {CLUSTER_LABEL: mine[1]}) and not held(theirs[0], {CLUSTER_LABEL: theirs[1]})


def test_a_shard_holds_the_secrets_its_passes_read_of_its_own_tenants_and_nothing_else() -> None:
    from tenantctl.operator.runtime.handlers import read_secrets_of  # newer than the mutation snapshot

    (ns, mine), (their_ns, theirs) = _pair_of_tenants()
    held = read_secrets_of(Shard(0, 2))
    labels = {"kamaji.clastix.io/name": mine}
    assert held((ns, f"{mine}-ca"), labels) and held((ns, f"{mine}-admin-kubeconfig"), labels)
    assert not held((ns, f"{mine}-api-server-certificate"), labels), "Kamaji's other Secrets are never read"
    assert not held((ns, f"{mine}-ca"), {}), "a Secret of that name Kamaji did not write"
    assert not held((their_ns, f"{theirs}-ca"), {"kamaji.clastix.io/name": theirs}), "another shard's tenant"
    assert read_secrets_of(Shard())((their_ns, f"{theirs}-ca"), {"kamaji.clastix.io/name": theirs})
    assert held((ns, f"{mine}-talos-ca"), {}), "the Talos CA cert-manager issues, known by its name"
    assert not held((their_ns, f"{theirs}-talos-ca"), {}), "another shard's tenant's Talos CA"
    assert not held((ns, "talos-ca"), {}) and not held((ns, f"{mine}-talos-secrets"), {})
    assert not held((None, f"{mine}-talos-ca"), {}), "a Secret is namespaced: no key without one is a tenant's"


async def test_a_shard_holds_the_apiserver_service_and_control_plane_of_its_own_tenants_only(
    mgmt: KubeEmulator,
) -> None:
    """Kamaji's Service and TenantControlPlane are named as the TenantCluster: a shard holds its own
    tenants' from the first list and no other shard's, so shards split them instead of each holding all."""
    from tenantctl.operator.runtime.handlers import other_controllers_objects_of  # newer than the snapshot

    (ns, mine), (their_ns, theirs) = _pair_of_tenants()
    for namespace, name in ((ns, mine), (their_ns, theirs)):
        mgmt.put("v1/services", {"metadata": {"name": name, "namespace": namespace,
                                              "labels": {"kamaji.clastix.io/name": name}}, "spec": {}})
    extras = other_controllers_objects_of(Shard(0, 2))
    assert extras[("kamaji.clastix.io/v1alpha1", "tenantcontrolplanes")]((ns, mine), {})
    assert not extras[("kamaji.clastix.io/v1alpha1", "tenantcontrolplanes")]((their_ns, theirs), {})
    assert not extras[("v1", "services")]((None, mine), {}), "no namespace: no tenant's"
    cache = WatchCache(owned=OWNED, scope=inventory_of(Shard(0, 2)), extra=extras)
    services = Resource("v1", "Service", "services", True)
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.get(services, mine, ns) is not None
        assert not [k for k in mgmt.named_reads if k[0] == "services"], "answered from the first list"
        assert cache.holds("v1", "services", their_ns, theirs) is None, "another shard's tenant's: not held"



async def test_a_missing_object_held_by_its_name_is_known_absent_without_a_read(mgmt: KubeEmulator) -> None:
    """A new tenant's TenantControlPlane and apiserver Service do not exist at its first pass: a store that
    holds them by name alone knows that from its list, so the read costs no request. Another shard's
    tenant's name is not held, so its absence is the server's to say."""
    from tenantctl.operator.runtime.handlers import other_controllers_objects_of  # newer than the snapshot

    (ns, mine), (their_ns, theirs) = _pair_of_tenants()
    cache = WatchCache(owned=OWNED, scope=inventory_of(Shard(0, 2)), extra=other_controllers_objects_of(Shard(0, 2)))
    services = Resource("v1", "Service", "services", True)
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.get(services, mine, ns) is None
        assert await api.get(services, theirs, their_ns) is None
        assert sorted(k for k in mgmt.named_reads if k[0] == "services") == [("services", their_ns, theirs)]
        mgmt.put("v1/services", {"metadata": {"name": mine, "namespace": ns}, "spec": {}})
        await eventually(lambda: cache.holds("v1", "services", ns, mine) is not None)
        assert await api.get(services, mine, ns) is not None, "created later, the watch brings it"
        assert sum(n for k, n in mgmt.named_reads.items() if k[0] == "services") == 1


def _pool_named_for_the_other_shard(namespace: str, cluster: str) -> str:
    """A pool name whose own hash falls on the other shard than its cluster's: a pool goes with its cluster."""
    first = Shard(0, 2)
    return next(f"p{i}" for i in range(100) if first.owns(namespace, f"p{i}") != first.owns(namespace, cluster))


async def test_a_shard_holds_other_shards_tenants_as_outlines_and_its_own_in_full(mgmt: KubeEmulator) -> None:
    """Any replica serves the webhook, which reads a tenant's cluster and pools: a shard holds every
    tenant's spec, but the status, annotations and finalizers of its own tenants only (two thirds of the
    bytes of each of the others)."""
    from tenantctl.operator.kube.cache import OUTLINE_METADATA, outline  # newer than the mutation snapshot
    from tenantctl.operator.runtime.handlers import HELD_WHOLE, NODE_POOLS, TENANT_CLUSTERS, tenants_in_full_of

    management(mgmt)
    mine, theirs = _pair_of_tenants()
    for namespace, cluster in (mine, theirs):
        meta = {"namespace": namespace, "labels": {"tenantctl.io/shard": "x"}, "finalizers": ["f"],
                "annotations": {"a": "b"}, "uid": "u", "generation": 3, "creationTimestamp": "t",
                "ownerReferences": [{"name": "o"}], "deletionTimestamp": "d"}
        mgmt.put(TC, {"apiVersion": "tenantctl.io/v1alpha1", "kind": "TenantCluster",
                      "metadata": {"name": cluster, **meta}, "spec": {"s": 1}, "status": {"phase": "Ready"}})
        mgmt.put("tenantctl.io/v1alpha1/nodepools", {
            "apiVersion": "tenantctl.io/v1alpha1", "kind": "NodePool",
            "metadata": {"name": _pool_named_for_the_other_shard(namespace, cluster), **meta},
            "spec": {"cluster": cluster}, "status": {"replicas": 1}})
    cache = WatchCache(owned=OWNED, complete=HELD_WHOLE, scope=inventory_of(Shard(0, 2)),
                       in_full=tenants_in_full_of(Shard(0, 2)))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        for res in (TENANT_CLUSTERS, NODE_POOLS):
            for namespace, _ in (mine, theirs):
                (listed,) = await api.list(res, namespace)
                assert listed == cache.holds(res.api_version, res.plural, namespace, listed["metadata"]["name"])
                served = mgmt.get(f"{res.api_version}/{res.plural}", namespace, listed["metadata"]["name"])
                assert served is not None
                if namespace == mine[0]:
                    assert listed == served, f"{res.kind}: this shard's own, in full"
                else:
                    assert listed == outline(served), f"{res.kind}: another shard's, an outline"
                    assert listed["spec"] == served["spec"] and "status" not in listed
                    assert set(listed["metadata"]) == set(OUTLINE_METADATA)
                    assert listed["metadata"]["labels"] == served["metadata"]["labels"]
    assert outline({"metadata": {"name": "a", "managedFields": []}, "spec": {}, "status": {}}) == {
        "metadata": {"name": "a"}, "spec": {}}
    assert tenants_in_full_of(Shard()) == {}, "a single shard holds every tenant in full"


@pytest.mark.looptime
async def test_the_operator_holds_its_objects_and_what_passes_read(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, url(tenant))
    mgmt.put("v1/secrets", {"metadata": {"name": "acme-api-server-certificate", "namespace": "tenant-acme"},
                            "data": {"tls.crt": "Q0VSVA=="}})  # Kamaji's, never read by the operator
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: condition(mgmt.get(TC, "tenant-acme", "acme"), "Ready").get("status") == "True")
        cache = ctx.api.cache
        assert cache is not None
        assert cache.holds("v1", "secrets", "tenant-acme", "acme-talos-secrets") is not None, "ours"
        assert cache.holds("v1", "secrets", "tenant-acme", "acme-ca") is not None, "read by the pass"
        assert cache.holds("v1", "secrets", "tenant-acme", "acme-api-server-certificate") is None
    asked = {name for (plural, _, name), _ in mgmt.named_reads.items() if plural == "secrets"}
    assert asked == set(), "Kamaji's CA and kubeconfig, the Talos CA and the capmox Secret are held before any read"


async def test_a_list_without_a_namespace_answers_from_every_namespace_held(mgmt: KubeEmulator) -> None:
    ours = {"managed-by": "us"}
    for ns in ("a", "b"):
        mgmt.put("v1/secrets", {**secret(f"s-{ns}", "MQ==", ours), "metadata": {
            "name": f"s-{ns}", "namespace": ns, "labels": ours}})
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache(owned=ours)) as api:
        await api.list(SECRETS, "a", ours)  # starts the watch
        lists = mgmt.tally["LIST", "secrets"]
        found = await api.list(SECRETS, None, ours)
        assert sorted(s["metadata"]["name"] for s in found) == ["s-a", "s-b"]
        assert mgmt.tally["LIST", "secrets"] == lists, "answered by the cache"


async def test_versions_answer_what_a_list_would_without_decoding(mgmt: KubeEmulator) -> None:
    """name → resourceVersion of exactly the objects `list` answers; None where the cache cannot answer."""
    ours = {"managed-by": "us"}
    mgmt.put("v1/secrets", secret("a", "MQ==", {**ours, "tenant": "t1"}))
    mgmt.put("v1/secrets", secret("b", "MQ==", {**ours, "tenant": "t2"}))
    mgmt.put("v1/secrets", {**secret("c", "MQ==", {**ours, "tenant": "t1"}), "metadata": {
        "name": "c", "namespace": "elsewhere", "labels": {**ours, "tenant": "t1"}}})
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache(owned=ours)) as api, \
            KubeClient(Connection.from_server(url(mgmt))) as direct:
        t1 = {**ours, "tenant": "t1"}
        assert set(await api.versions(SECRETS, "ns", t1) or {}) == {"a"}, "the first question starts the watch"
        listed = {s["metadata"]["name"]: s["metadata"]["resourceVersion"] for s in await api.list(SECRETS, "ns", t1)}
        assert await api.versions(SECRETS, "ns", t1) == listed == {"a": listed["a"]}
        assert set(await api.versions(SECRETS, None, t1) or {}) == {"a", "c"}
        assert await api.versions(SECRETS, "nothing-here", t1) == {}
        before = listed["a"]
        await direct.merge_patch(SECRETS, "a", "ns", {"data": {"v": "Mg=="}})
        await eventually(lambda: api.cache is not None and
                         (api.cache.holds("v1", "secrets", "ns", "a") or {}).get("data") == {"v": "Mg=="})
        assert (await api.versions(SECRETS, "ns", t1) or {})["a"] != before
        assert await api.versions(SECRETS, "ns", {"tenant": "t1"}) is None, "not ours: the cache does not hold all"
        assert await direct.versions(SECRETS, "ns", t1) is None, "no cache, no cheap answer"


def test_a_resource_never_read_holds_nothing() -> None:
    assert WatchCache().holds("v1", "secrets", "ns", "x") is None


async def test_a_list_in_pages_holds_every_page(mgmt: KubeEmulator) -> None:
    for i in range(5):
        mgmt.put("v1/secrets", secret(f"s{i}", "MQ==", {"app": "x"}))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=WatchCache(page_size=2)) as api:
        assert len(await api.list(SECRETS, "ns", {"app": "x"})) == 5
        assert mgmt.tally["LIST", "secrets"] == 3


async def test_an_object_of_ours_absent_from_the_cache_is_absent_without_a_read(mgmt: KubeEmulator) -> None:
    """What the operator makes carries the owned labels, so the watch would have brought it: the first
    read of what a new tenant is about to create is answered from the cache (`ours=True`)."""
    ours = {"managed-by": "us"}
    mgmt.put("v1/secrets", secret("ours", "MQ==", ours))
    cache = WatchCache(owned=ours)
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.get(SECRETS, "ours", "ns", ours=True) is not None
        reads = mgmt.reads
        assert await api.get(SECRETS, "not-yet", "ns", ours=True) is None
        assert mgmt.reads == reads, "absent from the cache: absent"
        assert await api.get(SECRETS, "not-yet", "ns") is None
        assert mgmt.reads == reads + 1, "without ours, a name not held is asked for"


def _store() -> _Store:
    return _Store(SECRETS)


def _held(store: _Store, name: str) -> dict[str, object] | None:
    entry = store.objects.get("ns", {}).get(name)
    return None if entry is None else dict(json.loads(entry.blob))


def _versioned(name: str, version: str, value: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    obj = secret(name, value, labels)
    obj["metadata"]["resourceVersion"] = version  # type: ignore[index]
    return obj


def test_a_late_event_never_replaces_a_newer_copy_and_a_drop_never_an_older_one() -> None:
    """Our write's answer and the watch's events race: etcd's integer versions decide which copy holds."""
    store = _store()
    store.put(_versioned("a", "5", "new"))
    store.put(_versioned("a", "3", "old"))
    assert (_held(store, "a") or {})["data"] == {"v": "new"}
    store.put(_versioned("a", "7", "newer"))
    assert (_held(store, "a") or {})["data"] == {"v": "newer"}
    store.drop(_versioned("a", "6", "gone"))
    assert _held(store, "a") is not None, "a delete older than the held copy is stale"
    store.drop(_versioned("a", "7", "gone"))
    assert _held(store, "a") is None


async def test_a_name_the_watch_answered_stays_known_after_a_relist_without_it() -> None:
    """Asked for, then brought by the watch before the server's answer: the watch's copy wins, and once
    known the name is answered from memory, also as absent after a relist that no longer holds it (it
    was deleted while the stream was down), never asked again."""
    store = _Store(SECRETS, owned={"managed-by": "us"})
    assert not store.answers("ns", "asked"), "a name not ours, never seen: the server is asked"
    store.put(_versioned("asked", "2", "new"))
    store.fetched("ns", "asked", _versioned("asked", "1", "old"))
    assert (_held(store, "asked") or {})["data"] == {"v": "new"}

    async def nothing_left() -> AsyncIterator[tuple[list[dict[str, object]], str]]:
        yield [], "9"

    assert await store.relist(nothing_left()) == "9"
    assert store.answers("ns", "asked") and store.find("ns", "asked") is None


def test_a_delete_seen_while_a_name_is_being_read_wins_over_the_servers_older_answer() -> None:
    """The watch's delete arrives between asking the server and its answer: the answer is older news,
    and the store must not bring back an object that is gone."""
    store = _Store(SECRETS, owned={"managed-by": "us"})
    assert not store.answers("ns", "asked")
    store.drop(_versioned("asked", "3", "gone"))
    store.fetched("ns", "asked", _versioned("asked", "2", "old"))
    assert store.answers("ns", "asked") and store.find("ns", "asked") is None


def test_a_delete_of_a_name_never_asked_for_is_not_remembered() -> None:
    """Every Secret deleted anywhere streams by: remembering their names would grow without bound."""
    store = _Store(SECRETS, owned={"managed-by": "us"})
    store.drop(_versioned("elsewhere", "3", "gone"))
    assert store.wanted == {}
    assert not store.answers("ns", "elsewhere"), "a name never asked for is the server's to answer"


def test_our_writes_answer_and_its_watch_event_are_stored_once() -> None:
    """One version arrives twice (the write's answer, then the event): the second is not encoded again."""
    store = _store()
    store.put(_versioned("a", "5", "mine"))
    held = store.objects["ns"]["a"]
    store.put(_versioned("a", "5", "mine"))
    assert store.objects["ns"]["a"] is held


def test_an_object_that_loses_our_label_is_no_longer_held() -> None:
    store = _Store(SECRETS, owned={"managed-by": "us"})
    store.put(_versioned("a", "1", "x", {"managed-by": "us"}))
    assert _held(store, "a") is not None
    store.put(_versioned("a", "2", "x"))
    assert _held(store, "a") is None


def test_versions_that_are_not_integers_are_taken_as_they_come() -> None:
    """resourceVersion is opaque by contract; only etcd's integers can be ordered. Any other server's
    versions (or none) are taken in the order they arrive, as a plain informer does."""
    store = _store()
    store.put(_versioned("a", "v-b", "first"))
    store.put(_versioned("a", "v-a", "second"))
    assert (_held(store, "a") or {})["data"] == {"v": "second"}
    store.drop(_versioned("a", "", "gone"))
    assert _held(store, "a") is None


def test_a_drop_in_a_namespace_never_seen_is_nothing() -> None:
    """The same name deleted in another namespace leaves ours held, adds no empty bucket for that namespace
    (every namespace's deletes stream by), and remembers nothing."""
    store = _store()
    store.put(_versioned("x", "5", "ours"))
    store.drop({"metadata": {"name": "x", "namespace": "elsewhere", "resourceVersion": "9"}})
    assert list(store.objects) == ["ns"]
    assert (_held(store, "x") or {})["data"] == {"v": "ours"}
    assert store.wanted == {}


async def test_a_deleted_object_that_was_asked_for_is_known_absent_without_a_read(mgmt: KubeEmulator) -> None:
    ours = {"managed-by": "us"}
    mgmt.put("v1/secrets", secret("asked", "MQ=="))
    cache = WatchCache(owned=ours)
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api, \
            KubeClient(Connection.from_server(url(mgmt))) as other:
        assert await api.get(SECRETS, "asked", "ns") is not None
        await other.delete(SECRETS, "asked", "ns")
        await eventually(lambda: cache.holds("v1", "secrets", "ns", "asked") is None)
        reads = mgmt.reads
        assert await api.get(SECRETS, "asked", "ns") is None
        assert mgmt.reads == reads, "the watch said it went: no read"


async def test_closing_the_cache_waits_for_its_watches_to_end(mgmt: KubeEmulator) -> None:
    """A client closed under them would leave tasks that log 'Task was destroyed but it is pending'."""
    cache = WatchCache()
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.list(SECRETS, "ns") == []
        watches = [t for t in asyncio.all_tasks() if t.get_name().startswith("watch ")]
        assert watches
        await cache.close()
        assert all(t.done() for t in watches)


async def test_a_write_to_a_resource_never_read_leaves_the_cache_alone(mgmt: KubeEmulator) -> None:
    cache = WatchCache()
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        await api.apply(SECRETS, secret("w", "MQ=="))
        assert cache.holds("v1", "secrets", "ns", "w") is None, "no store was started by a write"
        assert (await api.get(SECRETS, "w", "ns") or {})["data"] == {"v": "MQ=="}


async def test_a_namespace_given_for_a_cluster_scoped_object_does_not_split_what_the_cache_knows(
    mgmt: KubeEmulator,
) -> None:
    """Cluster-scoped objects are keyed without a namespace, whatever the caller passed: an absent name
    asked for once is known absent afterwards."""
    roles = Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False)
    cache = WatchCache(owned={"managed-by": "us"})
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.get(roles, "absent", "ns") is None
        reads = mgmt.reads
        assert await api.get(roles, "absent", "ns") is None
        assert await api.get(roles, "absent") is None
        assert mgmt.reads == reads


async def test_a_held_cluster_scoped_object_is_found_whatever_namespace_the_caller_passed(
    mgmt: KubeEmulator,
) -> None:
    roles = Resource("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False)
    mgmt.put("rbac.authorization.k8s.io/v1/clusterroles",
             {"metadata": {"name": "ours", "labels": {"managed-by": "us"}}})
    cache = WatchCache(owned={"managed-by": "us"})
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        assert await api.get(roles, "ours") is not None
        reads = mgmt.reads
        assert await api.get(roles, "ours", "ns") is not None
        assert mgmt.reads == reads


async def test_a_list_that_does_not_sync_in_time_leaves_the_read_to_the_server(mgmt: KubeEmulator) -> None:
    """The first read waits at most `sync_timeout` for the watch's list, then asks the server itself."""
    mgmt.put("v1/secrets", secret("a", "MQ=="))
    mgmt.fail(Fault("GET", "secrets", hang=8.0, times=1))  # the cache's list hangs
    cache = WatchCache(sync_timeout=0.2)
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        started = time.monotonic()
        assert (await api.get(SECRETS, "a", "ns") or {})["data"] == {"v": "MQ=="}
        assert time.monotonic() - started < 4.0, "the read waited for the hanging list"


async def test_a_list_that_fails_once_is_retried_and_the_cache_then_answers(
    mgmt: KubeEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    """The cache relists by itself, and at debug level says why the stream restarted."""
    mgmt.put("v1/secrets", secret("a", "MQ=="))
    mgmt.fail(Fault("GET", "secrets", status=500, times=1, message="etcd leader changed"))
    cache = WatchCache(retry_delay=0.05, sync_timeout=5.0)
    once = RetryPolicy(backoffs=())  # the client gives up at once: the cache's own retry is what relists
    with caplog.at_level(logging.DEBUG, logger="tenantctl.operator.kube.cache"):
        async with KubeClient(Connection.from_server(url(mgmt)), retry=once, cache=cache) as api:
            assert (await api.get(SECRETS, "a", "ns") or {})["data"] == {"v": "MQ=="}
            await eventually(lambda: cache.holds("v1", "secrets", "ns", "a") is not None)
            reads = mgmt.reads
            assert await api.get(SECRETS, "a", "ns") is not None
            assert mgmt.reads == reads, "answered by the relisted cache"
    (restart,) = [r.getMessage() for r in caplog.records if "restarts" in r.getMessage()]
    assert restart.startswith("watch of secrets restarts: ") and "etcd leader changed" in restart, restart


def test_managed_fields_are_not_held() -> None:
    """Server-side apply's managedFields are most of an object's bytes and nothing the operator reads."""
    store = _store()
    obj = _versioned("a", "1", "MQ==")
    obj["metadata"]["managedFields"] = [{"manager": "tenantctl", "operation": "Apply"}]  # type: ignore[index]
    store.put(obj)
    held = _held(store, "a")
    assert held is not None and "managedFields" not in held["metadata"]  # type: ignore[operator]
    assert held == {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "managedFields"}}  # type: ignore[union-attr]
