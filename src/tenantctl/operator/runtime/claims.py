"""The shard label: each sharded operator labels the tenants it owns, so its watches select them on the server.

A shard's kopf watches TenantClusters and NodePools with `tenantctl.io/shard=I-of-N` (`Shard.selector`):
another shard's tenants never reach it, their events are never decoded, and kopf keeps no state for
them. Who writes the label, and when:
- A new tenant (no label): every shard watches the unlabelled ones, and the owner (the hash of the
  TenantCluster's name, `shard_of`) labels it the moment it appears; the others let it be.
- A tenant of another layout (`--shards` changed): the owner under this layout relabels it in its sweep,
  once per resync interval, never on an event. Two layouts running side by side during the change then
  hand a tenant back and forth at most once per interval each, never in a loop, and once the old layout
  is gone one sweep settles every tenant. Whoever holds the label, one shard's watches select the tenant.
- A tenant labelled for this layout but not for its owner (edited by hand): the shard whose label it
  carries sees it and gives it to its owner (`misplaced`, in the handlers).
Each label is one JSON patch conditional on the resourceVersion read, so two writers never both win; a
refused one leaves it to the next event or sweep. The single shard selects, and labels, nothing.

The shard a tenant leaves sees it DELETED on its selected watch (what kube-apiserver sends when an
object stops matching): its reconciler ends there (`OperatorContext.release`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.config.sharding import SHARD_LABEL, Shard, shard_of
from tenantctl.operator.kube.client import CHANGED_SINCE_READ, APIError, KubeClient, NotFoundError, Resource

__all__ = ["Claims", "cluster_of_pool", "label", "owner_label"]

_log = logging.getLogger(__name__)
_WATCH_LIMIT = 300
"""Seconds a watch asks the server to keep its stream open (the server may end it sooner)."""
# A failed `test` (JSON patch) or a conflict: the object changed since it was read.
_CHANGED = frozenset({409, CHANGED_SINCE_READ})

ClusterOf = Callable[[Mapping[str, Any]], str]
"""The name of the TenantCluster an object belongs to (its own for a TenantCluster), "" for none."""


def cluster_of_pool(pool: Mapping[str, Any]) -> str:
    return str((pool.get("spec") or {}).get("cluster") or "")


def cluster_of_cluster(cluster: Mapping[str, Any]) -> str:
    return str((cluster.get("metadata") or {}).get("name") or "")


def owner_label(namespace: str, cluster: str, count: int) -> str:
    """The label of the shard of `count` that owns the tenant `namespace/cluster`."""
    return Shard(shard_of(namespace, cluster, count), count).label


async def label(api: KubeClient, res: Resource, obj: Mapping[str, Any], value: str) -> bool:
    """Set the shard label of `obj` to `value` if it is unchanged since read; True if written."""
    meta = obj.get("metadata") or {}
    labels = dict(meta.get("labels") or {})
    if labels.get(SHARD_LABEL) == value:
        return False
    patch: list[dict[str, Any]] = [
        {"op": "test", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion")},
        {"op": "add", "path": "/metadata/labels", "value": {**labels, SHARD_LABEL: value}},
    ]
    try:
        await api.json_patch(res, str(meta.get("name")), meta.get("namespace"), patch)
    except NotFoundError:
        return False
    except APIError as exc:
        if exc.status not in _CHANGED:
            raise
        return False
    return True


@dataclass
class Claims:
    """The labelling side of one shard: a sweep per resync interval, and a watch on the unlabelled between."""

    api: KubeClient
    shard: Shard
    interval: float
    page_size: int = 500
    retry_delay: float = 1.0
    labelled: int = 0
    """Labels this shard wrote: what a test or the benchmark reads."""

    async def run(self, kinds: Mapping[Resource, ClusterOf]) -> None:
        """Follow each kind until cancelled."""
        await asyncio.gather(*(self._follow(res, cluster_of) for res, cluster_of in kinds.items()))

    async def claim(self, res: Resource, obj: Mapping[str, Any], cluster_of: ClusterOf) -> None:
        """Label `obj` with this shard if this shard owns it under this layout."""
        namespace, cluster = (obj.get("metadata") or {}).get("namespace"), cluster_of(obj)
        mine = bool(namespace and cluster) and self.shard.owns(str(namespace), cluster)
        if mine and await label(self.api, res, obj, self.shard.label):
            self.labelled += 1

    async def _follow(self, res: Resource, cluster_of: ClusterOf) -> None:
        """Sweep, then watch the unlabelled until the next sweep is due; again after a failure."""
        while True:
            try:
                version = ""
                async for items, page_version in self.api.list_pages(res, self.page_size, self.shard.elsewhere):
                    version = version or page_version
                    for obj in items:
                        await self.claim(res, obj, cluster_of)
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(self.interval):  # the next sweep is due, whatever the stream does
                        while True:
                            version = await self._watch(res, version, cluster_of)
            except APIError as exc:
                _log.debug("labelling %s restarts: %s", res.plural, exc)
                await asyncio.sleep(self.retry_delay)

    async def _watch(self, res: Resource, version: str, cluster_of: ClusterOf) -> str:
        """Claim the unlabelled as they appear, until the server ends the stream; the version reached."""
        events = self.api.watch(res, version, self.shard.unlabelled, _WATCH_LIMIT)
        async with contextlib.aclosing(events):
            async for event in events:
                obj = event.get("object") or {}
                version = (obj.get("metadata") or {}).get("resourceVersion") or version
                if event.get("type") in ("ADDED", "MODIFIED"):
                    await self.claim(res, obj, cluster_of)
        return version
