"""Apply one tenant's rendered objects: compare first, server-side apply what drifted, prune the rest.

The inventory is the labels every rendered object carries (`managed-by` + `tenantctl.io/cluster`),
so an object this tenant rendered before and no longer renders is found by one list per kind.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from tenantctl.operator.kube.client import APIError, ImmutableFieldError, KubeClient, Resource
from tenantctl.operator.phases.conditions import Reason
from tenantctl.operator.phases.events import Recorder
from tenantctl.render.meta import inventory_scope

__all__ = [
    "REPLACE_ON_IMMUTABLE",
    "ApplyResult",
    "MissingAPIError",
    "Verified",
    "apply_inventory",
    "apply_shared",
    "comparable",
    "covers",
    "kind_key",
    "still_verified",
]

Obj = dict[str, Any]
# Kinds whose spec an admission webhook freezes: a changed render means delete and create again.
REPLACE_ON_IMMUTABLE = frozenset({"TalosConfigTemplate"})


class MissingAPIError(Exception):
    """A rendered kind is not served: install the provider that owns it, then the operator retries."""

    def __init__(self, kinds: Sequence[str]) -> None:
        super().__init__(f"the management cluster does not serve {', '.join(kinds)}; install their providers")
        self.kinds = list(kinds)


@dataclass(frozen=True)
class Verified:
    """A pass found every object it rendered in place and nothing to prune: what it rendered from (a
    digest of the render's inputs) and the resourceVersions of the live inventory it compared. While
    both are unchanged the next pass would render and compare the same objects to the same end, so it
    need not: an idle resync's render and compare were most of its CPU. Any write to the inventory, by
    anyone, changes a resourceVersion."""

    inputs: bytes
    live: bytes
    kinds: tuple[str, ...]


@dataclass
class ApplyResult:
    """What one pass changed, by `Kind/name`; empty lists mean the pass wrote nothing."""

    applied: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)
    pruned: list[str] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    verified: Verified | None = None
    """Set when this pass wrote nothing and the live inventory's versions are all known."""

    @property
    def wrote(self) -> bool:
        return bool(self.applied or self.replaced or self.pruned)


def kind_key(obj: Mapping[str, Any]) -> str:
    return f"{obj['apiVersion']}/{obj['kind']}"


def _split(key: str) -> tuple[str, str]:
    api_version, _, kind = key.rpartition("/")
    return api_version, kind


def _ref(obj: Mapping[str, Any]) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


def comparable(obj: Mapping[str, Any]) -> dict[str, Any]:
    """`stringData` is write-only on a real server (it lands in `data`): compare it as `data`."""
    out = dict(obj)
    string_data = out.pop("stringData", None)
    if string_data:
        out["data"] = {
            **(out.get("data") or {}),
            **{k: base64.b64encode(str(v).encode()).decode() for k, v in string_data.items()},
        }
    return out


def covers(live: Any, desired: Any) -> bool:
    """Whether `live` already holds every field of `desired` (server-added fields are ignored).

    Equal subtrees (most of a converged object) are settled by one comparison in C before the walk:
    an idle resync compares every rendered object, and the walk alone was half its CPU."""
    if live == desired:
        return True
    if isinstance(desired, Mapping):
        if not isinstance(live, Mapping):
            return False
        return all(k in live and covers(live[k], v) for k, v in desired.items())
    if isinstance(desired, list):
        return isinstance(live, list) and len(live) == len(desired) and all(map(covers, live, desired))
    return bool(live == desired)


async def _resources(api: KubeClient, keys: Iterable[str]) -> dict[str, Resource]:
    found: dict[str, Resource] = {}
    missing: list[str] = []
    for key in sorted(set(keys)):
        res = await api.resource(*_split(key))
        if res is None:
            missing.append(key)
        else:
            found[key] = res
    if missing:
        raise MissingAPIError(missing)
    return found


def _versions_digest(versions: Iterable[tuple[str, str, str | None]]) -> bytes | None:
    """One digest of the live inventory's versions; None if one is unknown (nothing to tell a change by)."""
    digest = hashlib.blake2b(digest_size=16)
    for key, name, version in sorted(versions, key=lambda v: (v[0], v[1])):
        if version is None:
            return None
        digest.update(f"{key}\0{name}\0{version}\n".encode())
    return digest.digest()


async def still_verified(
    api: KubeClient, verified: Verified | None, inputs: bytes, *, cluster: str, namespace: str
) -> bool:
    """Whether the last verified pass still holds: the same inputs, and the watch cache holds the same
    versions of the inventory (without a cache there is no cheap answer: render and compare)."""
    if verified is None or verified.inputs != inputs:
        return False
    versions: list[tuple[str, str, str | None]] = []
    for key in verified.kinds:
        res = await api.resource(*_split(key))
        if res is None:
            return False
        held = await api.versions(res, *inventory_scope(cluster, namespace, namespaced=res.namespaced))
        if held is None:
            return False
        versions += [(key, name, version) for name, version in held.items()]
    return _versions_digest(versions) == verified.live


async def apply_inventory(
    api: KubeClient,
    desired: Sequence[Obj],
    *,
    cluster: str,
    namespace: str,
    previous_kinds: Iterable[str],
    keep: Iterable[tuple[str, str]],
    recorder: Recorder,
    prune: bool = True,
    inputs: bytes | None = None,
) -> ApplyResult:
    """Converge the inventory of one cluster on `desired`; `keep` lists (kind, name) never pruned.
    `inputs`: the digest of what `desired` was rendered from, kept in `result.verified` if nothing is
    written."""
    result = ApplyResult()
    desired_keys = [kind_key(o) for o in desired]
    resources = await _resources(api, desired_keys)
    for key in set(previous_kinds) - set(resources):
        res = await api.resource(*_split(key))
        if res is not None:
            resources[key] = res
    result.kinds = sorted({*desired_keys, *resources})
    live: dict[tuple[str, str], Obj] = {}
    for key, res in resources.items():
        for obj in await api.list(res, *inventory_scope(cluster, namespace, namespaced=res.namespaced)):
            live[key, obj["metadata"]["name"]] = obj
    for obj in desired:
        key, name = kind_key(obj), obj["metadata"]["name"]
        current = live.get((key, name))
        if current is not None and covers(comparable(current), comparable(obj)):
            continue
        try:
            await api.apply(resources[key], obj)
            result.applied.append(_ref(obj))
        except ImmutableFieldError as exc:
            if obj["kind"] not in REPLACE_ON_IMMUTABLE:
                raise
            await _replace(api, resources[key], obj, str(exc), recorder)
            result.replaced.append(_ref(obj))
    if prune:
        wanted = {(kind_key(o), o["metadata"]["name"]) for o in desired} | set(keep)
        for (key, name), obj in sorted(live.items()):
            if (key, name) in wanted or (obj["kind"], name) in wanted:
                continue
            res = resources[key]
            await api.delete(res, name, obj["metadata"].get("namespace") if res.namespaced else None)
            result.pruned.append(_ref(obj))
            recorder.info(str(Reason.APPLIED), f"pruned {_ref(obj)}: no longer rendered")
    if inputs is not None and prune and not result.wrote:
        compared = _versions_digest(
            (key, name, obj["metadata"].get("resourceVersion")) for (key, name), obj in live.items()
        )
        if compared is not None:
            result.verified = Verified(inputs, compared, tuple(result.kinds))
    return result


async def apply_shared(api: KubeClient, desired: Sequence[Obj]) -> list[str]:
    """Apply objects every tenant shares (the Platform's chart sources): compared first, by name, never
    pruned by a tenant — another tenant's add-ons may use them. Returns what was written. They carry our
    labels and no tenant's, so every shard's watch cache holds them: absent there is absent (`ours`)."""
    written: list[str] = []
    resources = await _resources(api, [kind_key(o) for o in desired])
    for obj in desired:
        res = resources[kind_key(obj)]
        meta = obj["metadata"]
        live = await api.get(res, meta["name"], meta.get("namespace") if res.namespaced else None, ours=True)
        if live is not None and covers(comparable(live), comparable(obj)):
            continue
        await api.apply(res, obj)
        written.append(_ref(obj))
    return written


async def _replace(api: KubeClient, res: Resource, obj: Obj, why: str, recorder: Recorder) -> None:
    """CABPT refuses any spec change: delete the template and create it again, telling both steps.

    Machines already running keep the bootstrap data they joined with; new ones use the new template.
    """
    ref, ns = _ref(obj), obj["metadata"].get("namespace")
    recorder.warn(str(Reason.TEMPLATE_REPLACED), f"{ref}: spec is immutable ({why}); deleting it to create it again")
    try:
        await api.delete(res, obj["metadata"]["name"], ns)
    except APIError as exc:
        if exc.status != 403:
            raise
        raise APIError(
            403,
            "Forbidden",
            f"{ref} must be replaced but the operator may not delete it; grant the tenant's Role with "
            f"`tenantctl install -f <its TenantCluster and NodePools> | kubectl apply -f -` ({exc.message})",
        ) from exc
    await api.apply(res, obj)
    recorder.info(str(Reason.TEMPLATE_REPLACED), f"{ref}: created again with the new spec")
