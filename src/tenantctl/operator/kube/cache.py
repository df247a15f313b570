"""Reads fed by watches: one LIST then a WATCH per resource, cluster-wide, shared by every pass.

An idle resync of a converged tenant then costs no request at all on the management API: its gets
and lists are answered from memory, and writes stay 0 because compare-before-write compares against
these copies. A resource is cached the first time a pass reads it. Our own writes are stored as the
server answered them (newer resourceVersions only), so a pass never reads older than it wrote. A
resource the operator may not list or watch cluster-wide (RBAC) is read directly, as before.

Each object is held as compact JSON, without `managedFields`, plus its labels: a few times smaller
than the parsed object, and decoding it afresh for every read is cheaper than the deep copy a
shared parsed object would need (a pass may change what it reads).

With `owned` labels, a store holds only what the operator needs, not every object of its kind in the
cluster (every Deployment, every Secret of every controller): the objects carrying those labels, and
the ones a pass asked for by name — the first read of such a name goes to the server, the watch keeps
it current from then on. `complete` resources (TenantClusters, NodePools) are held whole — of a
shard's own tenants; every other shard's only as an outline (`outline`): who it is and its spec.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from tenantctl.operator.kube import wire
from tenantctl.operator.kube.client import APIError, KubeClient, Resource

__all__ = ["ByName", "Extra", "InFull", "WatchCache", "outline"]

Obj = dict[str, Any]
_log = logging.getLogger(__name__)
# Answers that say "this resource cannot be listed/watched by us": read it directly instead.
_UNCACHEABLE = frozenset({401, 403, 404, 405})


class _Entry(NamedTuple):
    """One object as held: its resourceVersion and labels (to match without decoding), and its JSON."""

    version: str | None
    labels: Mapping[str, str]
    blob: bytes

    @classmethod
    def of(cls, obj: Mapping[str, Any], in_full: bool = True) -> _Entry:
        meta = obj.get("metadata") or {}
        if not in_full:
            obj = outline(obj)
        elif "managedFields" in meta:
            obj = {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}
        blob = wire.encode(obj)
        return cls(meta.get("resourceVersion"), meta.get("labels") or {}, blob)

    def decoded(self) -> Obj:
        found: Obj = wire.decode(self.blob)
        return found


OUTLINE_METADATA = ("name", "namespace", "uid", "resourceVersion", "generation", "labels", "deletionTimestamp")
"""What an outline keeps of metadata: enough to name the object, match its labels and see it going."""


def outline(obj: Mapping[str, Any]) -> Obj:
    """An object without its status, annotations, finalizers and owners: what the admission webhook reads
    of another shard's tenant (its spec, to judge a neighbour's change against) at a third of the bytes."""
    meta = obj.get("metadata") or {}
    kept: Obj = {k: obj[k] for k in ("apiVersion", "kind", "spec") if k in obj}
    kept["metadata"] = {k: meta[k] for k in OUTLINE_METADATA if k in meta}
    return kept


def _newer_or_same(new: str | None, old: _Entry | None) -> bool:
    """resourceVersions are opaque, but etcd's are integers: never let an older copy replace a newer one."""
    if old is None:
        return True
    try:
        return int(new or "") >= int(old.version or "")
    except ValueError:
        return True


def _labels_match(have: Mapping[str, str], labels: Mapping[str, str] | None) -> bool:
    return all(have.get(k) == v for k, v in (labels or {}).items())


Key = tuple[str | None, str]
Scope = Callable[[str | None, Mapping[str, str]], bool]
"""Whether an object with our labels, in this namespace (None: cluster-scoped), is this replica's to hold."""
InFull = Callable[[Mapping[str, Any]], bool]
"""Whether an object of a `complete` resource is held in full; if not, as its outline."""
Extra = Callable[[Key, Mapping[str, str]], bool]
"""Whether an object without our labels is held anyway: one every pass reads by name, written by another
controller (its first read is then answered from memory, as a read of ours is)."""


@dataclass(frozen=True)
class ByName:
    """An `Extra` that holds objects by their key alone, whatever their labels (Kamaji's objects named as
    the tenant they serve). A synced store that lacks such a name knows the object is absent, so even the
    first read of one not created yet (a new tenant's TenantControlPlane) is answered without a request."""

    holds: Callable[[Key], bool]

    def __call__(self, key: Key, labels: Mapping[str, str]) -> bool:
        return self.holds(key)


_PENDING, _KNOWN = False, True
"""A name asked for: its server read is under way (the store cannot answer yet), or the store answers."""


@dataclass
class _Store:
    """The objects of one resource by namespace, then name (None for cluster-scoped ones)."""

    res: Resource
    owned: Mapping[str, str] | None = None
    """Labels of the objects held without being asked for; None: every object is held."""
    scope: Scope | None = None
    """Of the objects with `owned` labels, which are held (a shard's own tenants); None: all of them."""
    extra: Extra | None = None
    in_full: InFull | None = None
    """Of the objects held, which are held in full (None: all); the rest as their outline."""
    objects: dict[str | None, dict[str, _Entry]] = field(default_factory=dict)
    wanted: dict[Key, bool] = field(default_factory=dict)
    synced: asyncio.Event = field(default_factory=asyncio.Event)
    usable: bool = True
    task: asyncio.Task[None] | None = None

    def _key(self, meta: Mapping[str, Any]) -> Key:
        return self._key_of(meta.get("namespace"), str(meta.get("name", "")))

    def _key_of(self, namespace: str | None, name: str) -> Key:
        """A cluster-scoped object's key has no namespace, whatever namespace a caller or an event names."""
        return (namespace if self.res.namespaced else None), name

    def _held(self, key: Key, labels: Mapping[str, str]) -> bool:
        """Ours and this replica's, or held anyway (`extra`): a `ByName` store answers absence from what it
        holds, so it must hold every object its key names, whatever labels the object carries."""
        if self.owned is None or key in self.wanted:
            return True
        if _labels_match(labels, self.owned) and (self.scope is None or self.scope(key[0], labels)):
            return True
        return self.extra is not None and self.extra(key, labels)

    def put(self, obj: Obj) -> None:
        self._put(self.objects, obj)

    def _put(self, objects: dict[str | None, dict[str, _Entry]], obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        key = self._key(meta)
        if self._admits(objects, key, meta.get("resourceVersion"), meta.get("labels") or {}):
            objects[key[0]][key[1]] = _Entry.of(obj, self.in_full is None or self.in_full(obj))

    def put_stored(self, obj: wire.Stored) -> None:
        """`put` of an object as the server's JSON spliced (`wire.stored`), never decoded whole; only for a
        store that holds every object in full."""
        key = self._key_of(obj.namespace, obj.name)
        if self._admits(self.objects, key, obj.version, obj.labels):
            self.objects[key[0]][key[1]] = _Entry(obj.version, obj.labels, obj.blob)

    def _admits(self, objects: dict[str | None, dict[str, _Entry]], key: Key, version: str | None,
                labels: Mapping[str, str]) -> bool:
        """Whether this copy of `key` is to be stored now (its namespace's bucket is then there); a copy no
        longer to be held (a label removed) is dropped here."""
        ns, name = key
        if key in self.wanted:
            self.wanted[key] = _KNOWN
        if not self._held(key, labels):
            objects.get(ns, {}).pop(name, None)
            return False
        bucket = objects.setdefault(ns, {})
        held = bucket.get(name)
        if held is not None and held.version is not None and held.version == version:
            return False  # our write's answer, then its watch event: one version, stored once
        return _newer_or_same(version, held)

    def settled(self, head: wire.EventHead) -> bool:
        """Whether a watch event would change nothing here, judged from its head alone: an object neither
        held nor to be held, or the very version held (our write's answer came first). Such an event is
        never decoded: most of a cluster's Secrets and Deployments go by a store that holds few of them."""
        key = self._key_of(head.namespace, head.name)
        held = self.objects.get(key[0], {}).get(key[1])
        if held is not None:
            same = head.type != "DELETED" and held.version is not None and held.version == head.version
            return same and self._held(key, head.labels)
        return not self._held(key, head.labels)

    def drop(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        ns, name = key = self._key(meta)
        if key in self.wanted:
            self.wanted[key] = _KNOWN
        bucket = self.objects.get(ns, {})
        current = bucket.get(name)
        if current is not None and _newer_or_same(meta.get("resourceVersion"), current):
            del bucket[name]

    async def relist(self, pages: AsyncIterator[tuple[list[Obj], str]]) -> str:
        """Hold what a fresh list holds, a page at a time; the list's resourceVersion, to watch from."""
        fresh: dict[str | None, dict[str, _Entry]] = {}
        version = ""
        async for items, page_version in pages:  # reads go on being answered by what is held meanwhile
            for item in items:
                self._put(fresh, item)
            version = version or page_version
        self.objects = fresh
        return version

    def find(self, namespace: str | None, name: str) -> Obj | None:
        bucket, name = self._key_of(namespace, name)
        entry = self.objects.get(bucket, {}).get(name)
        return entry.decoded() if entry is not None else None

    def answers(self, namespace: str | None, name: str, ours: bool = False) -> bool:
        """Whether the store knows this object (held, or known absent); if not, the name is asked for now.
        `ours`: the object would carry the owned labels (and be this replica's), so the store holds it if
        it exists."""
        key = self._key_of(namespace, name)
        if self.owned is None or ours or self.wanted.get(key) is _KNOWN or name in self.objects.get(key[0], {}):
            return True
        if isinstance(self.extra, ByName) and self.extra.holds(key):
            return True
        self.wanted.setdefault(key, _PENDING)
        return False

    def fetched(self, namespace: str | None, name: str, obj: Obj | None) -> None:
        """The server's answer to a read the store could not answer; the watch's word, if any came, wins."""
        key = self._key_of(namespace, name)
        if self.wanted.get(key) is _PENDING:
            self.wanted[key] = _KNOWN
            if obj is not None:
                self.put(obj)


@dataclass
class WatchCache:
    """Watch-fed copies of the resources a client reads; start none until first asked."""

    sync_timeout: float = 30.0
    retry_delay: float = 1.0
    owned: Mapping[str, str] | None = None
    """Labels of our own objects; None: hold every object of a watched resource."""
    complete: frozenset[tuple[str, str]] = frozenset()
    """(apiVersion, plural) of resources held whole even with `owned`."""
    scope: Scope | None = None
    """Which labelled objects this replica holds: a shard holds its own tenants' inventory, not every
    shard's (the inventory is most of the cache: held by every shard, memory grew with all tenants)."""
    extra: Mapping[tuple[str, str], Extra] = field(default_factory=dict)
    """Per (apiVersion, plural), the objects of other controllers held too (see `Extra`)."""
    in_full: Mapping[tuple[str, str], InFull] = field(default_factory=dict)
    """Per `complete` (apiVersion, plural), which objects are held in full: a shard's own tenants'; every
    other shard's as outlines (held whole, they were ~45 MiB of each shard's ~300 at 10,000 tenants)."""
    page_size: int = 500
    """Objects per page of a (re)list: what is decoded at once before the store keeps or drops it."""
    _stores: dict[tuple[str, str], _Store] = field(default_factory=dict)

    async def _store(self, api: KubeClient, res: Resource) -> _Store | None:
        key = (res.api_version, res.plural)
        store = self._stores.get(key)
        if store is None:
            owned = None if key in self.complete else self.owned
            store = self._stores[key] = _Store(
                res, owned, None if owned is None else self.scope, None if owned is None else self.extra.get(key),
                self.in_full.get(key),
            )
            store.task = asyncio.create_task(self._follow(api, store), name=f"watch {res.api_version}/{res.plural}")
        if not store.synced.is_set():  # a timeout scope per read cost more than the read itself
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(self.sync_timeout):
                    await store.synced.wait()
        return store if store.usable and store.synced.is_set() else None

    async def get(
        self, api: KubeClient, res: Resource, name: str, namespace: str | None, *, ours: bool = False
    ) -> tuple[bool, Obj | None]:
        """(True, copy or None) when the cache answers; (False, None) when the caller must ask the server."""
        store = await self._store(api, res)
        if store is None or not store.answers(namespace, name, ours):
            return False, None
        return True, store.find(namespace, name)

    def fetched(self, res: Resource, name: str, namespace: str | None, obj: Obj | None) -> None:
        """What the server answered to a get the cache could not answer (`obj` None: not found)."""
        store = self._stores.get((res.api_version, res.plural))
        if store is not None:
            store.fetched(namespace, name, obj)

    async def _listed(
        self, api: KubeClient, res: Resource, namespace: str | None, labels: Mapping[str, str] | None
    ) -> list[tuple[str, _Entry]] | None:
        """(name, entry) of what a list would answer; None when the cache does not hold all of it."""
        store = await self._store(api, res)
        if store is None or (store.owned is not None and not _labels_match(labels or {}, store.owned)):
            return None  # objects not labelled as ours are not all held: the server lists them
        buckets = [store.objects.get(namespace, {})] if res.namespaced and namespace is not None else list(
            store.objects.values()
        )
        return [(name, e) for bucket in buckets for name, e in bucket.items() if _labels_match(e.labels, labels)]

    async def list(
        self, api: KubeClient, res: Resource, namespace: str | None, labels: Mapping[str, str] | None
    ) -> list[Obj] | None:
        listed = await self._listed(api, res, namespace, labels)
        return None if listed is None else [e.decoded() for _, e in listed]

    async def versions(
        self, api: KubeClient, res: Resource, namespace: str | None, labels: Mapping[str, str]
    ) -> dict[str, str | None] | None:
        """What `list` would answer, as name → resourceVersion, without decoding an object; None when the
        cache cannot answer (the caller must list)."""
        listed = await self._listed(api, res, namespace, labels)
        return None if listed is None else {name: e.version for name, e in listed}

    def holds(self, api_version: str, plural: str, namespace: str | None, name: str) -> Obj | None:
        """The copy held now, without waiting or asking (what a test waits on after changing the server)."""
        store = self._stores.get((api_version, plural))
        return None if store is None else store.find(namespace, name)

    def wrote(self, res: Resource, obj: Obj) -> None:
        """What the server answered to our write: newer than any copy we hold, visible to the next read."""
        store = self._stores.get((res.api_version, res.plural))
        if store is not None and store.synced.is_set() and obj.get("metadata", {}).get("name"):
            store.put(obj)

    def wrote_answer(self, res: Resource, answer: bytes) -> None:
        """`wrote`, given the answer as the server sent it: held without being decoded whole where the
        store holds every object in full (an outline needs the object decoded)."""
        store = self._stores.get((res.api_version, res.plural))
        if store is None or not store.synced.is_set():
            return
        spliced = wire.stored(answer) if store.in_full is None else None
        if spliced is None:
            self.wrote(res, wire.decode(answer) if answer else {})
        elif spliced.name:
            store.put_stored(spliced)

    async def close(self) -> None:
        tasks = [s.task for s in self._stores.values() if s.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._stores.clear()

    async def _follow(self, api: KubeClient, store: _Store) -> None:
        """List, then watch from the list's version; relist when the version is gone or the stream fails."""
        while True:
            try:
                version = await store.relist(api.list_pages(store.res, self.page_size))
                store.synced.set()
                while True:
                    async for head, line in api.watch_lines(store.res, version):
                        if head is not None and (head.type == "BOOKMARK" or store.settled(head)):
                            version = head.version or version  # a bookmark's object is its version alone
                            continue
                        event = wire.decode(line)
                        obj = event.get("object") or {}
                        if event.get("type") == "BOOKMARK":
                            version = obj.get("metadata", {}).get("resourceVersion") or version
                            continue
                        obj.setdefault("apiVersion", store.res.api_version)
                        obj.setdefault("kind", store.res.kind)
                        if event.get("type") == "DELETED":
                            store.drop(obj)
                        else:
                            store.put(obj)
                        version = obj.get("metadata", {}).get("resourceVersion") or version
            except APIError as exc:
                if exc.status in _UNCACHEABLE:  # e.g. RBAC grants list but not watch: never poll lists
                    _log.info("reading %s directly: %s", store.res.plural, exc)
                    store.usable = False
                    store.synced.set()
                    return
                _log.debug("watch of %s restarts: %s", store.res.plural, exc)
            await asyncio.sleep(self.retry_delay)
