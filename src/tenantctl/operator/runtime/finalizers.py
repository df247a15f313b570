"""The teardown finalizer each shard holds, and how the shard that owns a tenant now takes over the
finalizers an earlier shard layout left on it.

kopf adds its finalizer to the objects a shard owns and removes it from those it does not, so each
shard needs a name of its own. The name carries the layout (`…-shard-I-of-N`): shards of two layouts
running side by side during a change of `--shards` then never strip each other's finalizer, which
two shards sharing an index-only name would do back and forth.

A tenant keeps the finalizer of the shard that owned it under an earlier layout until someone removes
it, and no running shard's kopf does: the tenant's owner under the running layout does it here.
- Not being deleted: its reconcile pass replaces every other tenantctl teardown finalizer with its
  own, in one conditional write (`take_over`), read again from the server when it was refused. A pass
  runs at most once per resync when nothing changes, so while the old layout still runs (its kopf puts
  its finalizer back) the exchange costs a write per resync on each side, never a loop; once the old
  layout is gone, one pass settles it.
- Being deleted: after its teardown it drops the other tenantctl finalizers (`release`) before kopf
  removes its own. A tenant deleted before its owner added its own finalizer (Kubernetes accepts no
  new finalizer on an object being deleted) is `orphaned`: the owner tears it down without kopf.
Only names this module recognises as tenantctl's teardown finalizers are ever removed.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.client import CHANGED_SINCE_READ, APIError, KubeClient, NotFoundError, Resource

__all__ = ["TEARDOWN", "finalizer_of", "foreign", "is_teardown_finalizer", "orphaned", "release", "take_over",
           "taken_over"]

TEARDOWN = "tenantctl.io/teardown"
# The unsharded name, the index-only names of the first sharded release, and the layout-qualified ones.
_TEARDOWN_NAMES = re.compile(r"tenantctl\.io/teardown(?:-shard-[0-9]+(?:-of-[0-9]+)?)?")
_log = logging.getLogger(__name__)


def finalizer_of(shard: Shard) -> str:
    """The single shard keeps the name unsharded operators always used; shard I of N has `-shard-I-of-N`."""
    return TEARDOWN if shard.count == 1 else f"{TEARDOWN}-shard-{shard.index}-of-{shard.count}"


def is_teardown_finalizer(name: str) -> bool:
    return _TEARDOWN_NAMES.fullmatch(name) is not None


def _finalizers(body: Mapping[str, Any]) -> list[str]:
    return [str(f) for f in (body.get("metadata") or {}).get("finalizers") or []]


def foreign(body: Mapping[str, Any], own: str) -> list[str]:
    """The tenantctl teardown finalizers on `body` other than `own`: left by another shard layout."""
    return [f for f in _finalizers(body) if f != own and is_teardown_finalizer(f)]


def taken_over(finalizers: Sequence[str], own: str) -> list[str]:
    """`own` where the first tenantctl teardown finalizer was, the others dropped; everyone else's kept in order."""
    out: list[str] = []
    for name in finalizers:
        if not is_teardown_finalizer(name):
            out.append(name)
        elif own not in out:
            out.append(own)
    return out


def orphaned(body: Mapping[str, Any], own: str) -> bool:
    """Being deleted with only other layouts' teardown finalizers: kopf will not tear it down here."""
    deleting = bool((body.get("metadata") or {}).get("deletionTimestamp"))
    return deleting and own not in _finalizers(body) and bool(foreign(body, own))


def _replace(seen: list[str], wanted: list[str]) -> list[dict[str, Any]]:
    """Replace the finalizers only if they are still what was read."""
    return [
        {"op": "test", "path": "/metadata/finalizers", "value": seen},
        {"op": "replace", "path": "/metadata/finalizers", "value": wanted},
    ]


async def take_over(api: KubeClient, res: Resource, body: Mapping[str, Any], own: str) -> bool:
    """Put `own` in place of other layouts' finalizers on an object not being deleted; True if written.

    `body` may be a cached copy from before kopf added `own`: that change keeps the generation, so no
    event wakes another pass, and a refusal left the old layout's finalizer on until the next resync. A
    refused exchange is read again from the server and retried at once, then after each client backoff
    but the first (the immediate retry takes its place: as many tries as `release`) while the finalizers
    keep changing (another layout's kopf putting its own back). A refusal with the
    finalizers as read is not about them: it is logged and left to the next pass, without a wait.
    """
    meta = body.get("metadata") or {}
    name, namespace = str(meta.get("name")), meta.get("namespace")
    current: Mapping[str, Any] | None = body
    refused: APIError | None = None
    seen: list[str] = []
    for attempt, pause in enumerate((*api.retry.backoffs, None)):
        if current is None or (current.get("metadata") or {}).get("deletionTimestamp") or not foreign(current, own):
            return False
        if refused is not None and _finalizers(current) == seen:
            _log.warning("%s %s/%s: exchanging its finalizers for %s was refused: %s",
                         res.kind, namespace, name, own, refused)
            return False
        seen = _finalizers(current)
        try:
            await api.json_patch(res, name, namespace, _replace(seen, taken_over(seen, own)))
        except NotFoundError:
            return False
        except APIError as exc:
            if exc.status != CHANGED_SINCE_READ:
                raise
            if pause is None:
                return False
            if attempt:
                await asyncio.sleep(pause)
            refused, current = exc, await api.get(res, name, namespace, cached=False)
        else:
            return True
    return False


async def release(api: KubeClient, res: Resource, namespace: str | None, name: str, own: str) -> None:
    """Drop other layouts' teardown finalizers from a torn-down object, re-reading when they changed.

    `own` stays for kopf to remove as the handler returns (an orphaned object has none). The first read
    may come from the watch cache; after a refusal the cache may be what was behind, so the server is read.
    """
    for attempt, pause in enumerate((*api.retry.backoffs, None)):
        body = await api.get(res, name, namespace, cached=not attempt)
        if body is None or not foreign(body, own):
            return
        seen = _finalizers(body)
        kept = [f for f in seen if f == own or not is_teardown_finalizer(f)]
        try:
            await api.json_patch(res, name, namespace, _replace(seen, kept))
        except NotFoundError:
            return
        except APIError as exc:
            if exc.status != CHANGED_SINCE_READ or pause is None:
                raise
            await asyncio.sleep(pause)
        else:
            return
