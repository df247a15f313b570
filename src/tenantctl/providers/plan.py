"""`providers plan`: what capi-operator will do with a new render, given the one already applied.

capi-operator re-applies a provider only when `operator.cluster.x-k8s.io/applied-spec-hash` changes,
and that hash covers the provider's spec and its config Secret — not the ConfigMap holding the
components. New components under an unchanged spec are therefore ignored on every cluster that runs
the provider, and nothing reports it; that case is a refusal here, the rest is reported.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.problems import Problems
from tenantctl.providers.blob import BlobError, decompress
from tenantctl.providers.catalogue import OPERATOR_API_VERSION, PROVIDER_TYPES

__all__ = ["Verdict", "plan"]

_GROUP = OPERATOR_API_VERSION.split("/")[0]


@dataclass(frozen=True)
class Verdict:
    provider: str
    outcome: str
    detail: str

    def __str__(self) -> str:
        return f"{self.provider}: {self.outcome}{' — ' + self.detail if self.detail else ''}"


def _key(doc: Mapping[str, Any]) -> str:
    meta = doc.get("metadata") or {}
    return f"{doc.get('kind')}/{meta.get('namespace', '')}/{meta.get('name')}"


def _providers(docs: Sequence[Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    return {
        _key(d): d for d in docs
        if str(d.get("apiVersion", "")).split("/")[0] == _GROUP and d.get("kind") in PROVIDER_TYPES
    }


def _components(provider: Mapping[str, Any], docs: Sequence[Mapping[str, Any]]) -> tuple[bytes, str] | None:
    """Decompressed components and metadata of the ConfigMap the provider's selector picks, if any."""
    namespace = (provider.get("metadata") or {}).get("namespace")
    selector = (((provider.get("spec") or {}).get("fetchConfig") or {}).get("selector") or {}).get("matchLabels")
    if not selector:
        return None
    for d in docs:
        meta = d.get("metadata") or {}
        labels = meta.get("labels") or {}
        if d.get("kind") != "ConfigMap" or meta.get("namespace") != namespace:
            continue
        if all(labels.get(k) == v for k, v in selector.items()):
            raw = (d.get("binaryData") or {}).get("components")
            try:
                blob = decompress(base64.b64decode(raw, validate=True)) if raw else None
            except (BlobError, binascii.Error):
                blob = None
            comps = blob if blob is not None else str((d.get("data") or {}).get("components", "")).encode()
            return comps, str((d.get("data") or {}).get("metadata", ""))
    return None


def _spec_changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> list[str]:
    before, after = old.get("spec") or {}, new.get("spec") or {}
    changes = []
    for field in sorted(before.keys() | after.keys(), key=lambda f: (f != "version", f)):
        if before.get(field) != after.get(field):
            if field == "version":
                changes.append(f"spec.version {before.get(field)} → {after.get(field)}")
            else:
                changes.append(f"spec.{field}")
    return changes


def plan(
    previous: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]], source: str
) -> tuple[list[Verdict], Problems]:
    """One verdict per provider; a components change under an unchanged spec is an error."""
    problems = Problems()
    verdicts: list[Verdict] = []
    old, new = _providers(previous), _providers(current)
    for key in sorted(old.keys() | new.keys()):
        if key not in old:
            verdicts.append(Verdict(key, "installed", f"version {(new[key].get('spec') or {}).get('version')}"))
            continue
        if key not in new:
            verdicts.append(Verdict(key, "no longer rendered", "delete it yourself: apply does not prune it"))
            continue
        changes = _spec_changes(old[key], new[key])
        before, after = _components(old[key], previous), _components(new[key], current)
        if changes:
            verdicts.append(Verdict(key, "re-applied", "; ".join(changes)))
        elif before is None or after is None:
            side = "the previous render" if before is None else "this render"
            verdicts.append(Verdict(key, "unchanged spec", f"components not compared: {side} has no ConfigMap "
                                    "(planning mode)"))
            problems.warn(f"{source}: {key}", "components not compared; render both with --components")
        elif before != after:
            what = "components" if before[0] != after[0] else "metadata"
            version = (new[key].get("spec") or {}).get("version")
            verdicts.append(Verdict(key, "silently ignored", f"{what} changed under spec.version {version}"))
            problems.error(
                f"{source}: {key}",
                f"{what} changed but spec.version ({version}) and the ConfigMap name did not: capi-operator "
                "re-applies only when operator.cluster.x-k8s.io/applied-spec-hash (provider spec + config "
                "Secret) changes, so clusters already running this provider would keep the old components and "
                "report nothing. Move the package to a new version (version and ConfigMap name together)",
            )
        else:
            verdicts.append(Verdict(key, "unchanged", ""))
    return verdicts, problems
