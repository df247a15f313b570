"""Which watch events need another reconcile pass: those carrying a generation no pass has read.

kopf's own patches (finalizers, its annotations) and our status writes keep an object's generation.
At the creation of a thousand tenants they arrive while each first pass waits for its turn; waking
a second pass for each of them doubled the work. An event that arrives between the scheduling of a
pass and its reads is held back and checked against what the pass then read, so a spec change the
pass's reads missed (the watch cache one event behind kopf's) still gets its pass.

The generation an event brought is also what the pass that event wakes must read: after a watch
outage kopf's streams may come back before the cache's, and a pass reading the cache would then act on
the copy before the change, and nothing would wake it again. `behind` says so, and the pass reads the
server instead.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Triggers"]

Key = tuple[str, str]
"""A TenantCluster's namespace and name: whose passes an event is about."""
Ref = tuple[str, str, str]
"""kind, namespace, name of a TenantCluster or NodePool."""


def _ref(obj: Mapping[str, Any]) -> tuple[Ref, int]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("kind", "")), str(meta.get("namespace", "")), str(meta.get("name", ""))), int(
        meta.get("generation") or 0
    )


@dataclass
class Triggers:
    """The generations the latest passes read, and those events brought while a pass was still to read."""

    _read: dict[Ref, int] = field(default_factory=dict)
    _held: dict[Key, dict[Ref, int]] = field(default_factory=dict)
    _scheduled: set[Key] = field(default_factory=set)
    _seen: dict[Key, dict[Ref, int]] = field(default_factory=dict)
    """The newest generation an event showed of each of `key`'s objects, until a pass reads it."""

    def scheduled(self, key: Key) -> None:
        """A pass of `key` will read its objects soon: events until then need no pass of their own."""
        self._scheduled.add(key)

    def behind(self, key: Key, objects: Iterable[Mapping[str, Any]]) -> bool:
        """Whether these copies of `key`'s objects are older than events already seen, or miss an object an
        event showed: the cache lags the watch the events came from, and the server must be read."""
        have = dict(_ref(obj) for obj in objects)
        return any(have.get(ref, -1) < generation for ref, generation in self._seen.get(key, {}).items())

    def read(self, key: Key, objects: Iterable[Mapping[str, Any]], *, fresh: bool = False) -> bool:
        """Record what a pass of `key` read (`fresh`: from the server, so an object absent is gone); True
        when an event held back meanwhile is newer (pass again)."""
        self._scheduled.discard(key)
        read: dict[Ref, int] = {}
        for obj in objects:
            ref, generation = _ref(obj)
            self._read[ref] = read[ref] = generation
        seen = self._seen.get(key, {})
        for ref, generation in list(seen.items()):
            if read.get(ref, -1) >= generation or (fresh and ref not in read):
                del seen[ref]
        if not seen:
            self._seen.pop(key, None)
        held = self._held.pop(key, {})
        return any(generation > self._read.get(ref, -1) for ref, generation in held.items())

    def wakes(self, key: Key, obj: Mapping[str, Any]) -> bool:
        """Whether an event about `obj`, one of `key`'s objects, should wake `key`'s reconciler now."""
        ref, generation = _ref(obj)
        if generation <= self._read.get(ref, -1):
            return False
        seen = self._seen.setdefault(key, {})
        seen[ref] = max(generation, seen.get(ref, 0))
        if key in self._scheduled:
            held = self._held.setdefault(key, {})
            held[ref] = max(generation, held.get(ref, 0))
            return False
        return True

    def forget(self, kind: str, namespace: str, name: str) -> None:
        self._read.pop((kind, namespace, name), None)
        for seen in self._seen.values():
            seen.pop((kind, namespace, name), None)
        if kind == "TenantCluster":
            self._held.pop((namespace, name), None)
            self._seen.pop((namespace, name), None)
            self._scheduled.discard((namespace, name))
