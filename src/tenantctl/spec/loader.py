"""From YAML documents to a checked `TenantInput`: structure first, then every cross-field rule."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from tenantctl.problems import Problem, Problems
from tenantctl.spec.address_pools import check_address_overlaps, worker_pools
from tenantctl.spec.certificates import ca_bundle_problem
from tenantctl.spec.checks import (
    check_gpu_operator,
    check_ingress_pools,
    check_ip_capacity,
    check_node_pool,
    check_observed_state,
    check_tenant_cluster,
    ref,
)
from tenantctl.spec.errors import problems_from_validation_error
from tenantctl.spec.nodepool import NodePool
from tenantctl.spec.observed import ObservedState
from tenantctl.spec.pool_placement import check_vmid_overlaps
from tenantctl.spec.tenant import TenantCluster

__all__ = ["API_VERSION", "TenantInput", "parse_observed", "parse_tenant_documents"]

API_VERSION = "tenantctl.io/v1alpha1"
_KINDS: dict[str, type[BaseModel]] = {
    "TenantCluster": TenantCluster,
    "NodePool": NodePool,
    "ObservedState": ObservedState,
}
# Kinds other rooms read from the same files (`providers render` takes the Platform).
_FOREIGN_KINDS = {"Platform"}
# Fields the API server adds to an object: irrelevant to the spec, stripped before validation.
_SERVER_METADATA = {
    "uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "finalizers",
    "ownerReferences", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink", "generateName",
}


@dataclass(frozen=True)
class TenantInput:
    """Every TenantCluster and NodePool of one input, checked; warnings kept for the caller to show."""

    clusters: tuple[TenantCluster, ...]
    pools: tuple[NodePool, ...]
    warnings: tuple[Problem, ...] = field(default=())

    def pools_of(self, cluster: TenantCluster) -> tuple[NodePool, ...]:
        return tuple(
            p
            for p in self.pools
            if p.spec.cluster == cluster.metadata.name and p.metadata.namespace == cluster.metadata.namespace
        )


def _strip_server_fields(doc: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in doc.items() if k != "status"}
    meta = out.get("metadata")
    if isinstance(meta, Mapping):
        out["metadata"] = {k: v for k, v in meta.items() if k not in _SERVER_METADATA}
    return out


def _doc_ref(doc: Mapping[str, Any], index: int) -> str:
    """`Kind/name` when both are plain strings; a mapping or list there is named by its position."""
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, Mapping) else None
    kind = doc.get("kind")
    kind = kind if isinstance(kind, str) and kind else "document"
    return ref(kind, name) if isinstance(name, str) and name else f"{kind}[document {index}]"


@dataclass
class _Seen:
    """What the input held besides valid models: kinds read elsewhere, and clusters already refused (their
    pools are not told a second time that their cluster is missing)."""

    foreign: set[str] = field(default_factory=set)
    refused_clusters: set[tuple[str, str]] = field(default_factory=set)


def _parse_models(docs: Iterable[Mapping[str, Any]], problems: Problems, seen: _Seen) -> list[BaseModel]:
    models: list[BaseModel] = []
    for i, raw in enumerate(docs):
        doc = _strip_server_fields(raw)
        at = _doc_ref(doc, i)
        kind, api_version = doc.get("kind"), doc.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api_version, str):
            problems.error(
                f"{at}.{'kind' if not isinstance(kind, str) else 'apiVersion'}",
                f"must be a string (got {type(kind if not isinstance(kind, str) else api_version).__name__}); "
                f"expected {API_VERSION} {' or '.join(_KINDS)}",
            )
            continue
        if kind in _FOREIGN_KINDS:
            seen.foreign.add(kind)
            continue
        model_cls = _KINDS.get(kind)
        if api_version != API_VERSION or model_cls is None:
            problems.error(
                f"{at}.kind",
                f"unsupported apiVersion/kind {api_version[:80]}/{kind[:80]}; expected {API_VERSION} "
                f"{' or '.join(_KINDS)}{_kind_hint(kind)}",
            )
            continue
        try:
            models.append(model_cls.model_validate(doc))
        except ValidationError as exc:
            problems.extend(problems_from_validation_error(exc, model_cls, at))
            salvaged = _without_unknown_fields(model_cls, doc, exc)
            if salvaged is not None:
                models.append(salvaged)
            elif model_cls is TenantCluster:
                meta = doc.get("metadata")
                if isinstance(meta, Mapping) and isinstance(meta.get("namespace"), str) and isinstance(
                    meta.get("name"), str
                ):
                    seen.refused_clusters.add((meta["namespace"], meta["name"]))
    return models


def _kind_hint(kind: str) -> str:
    """Kinds are case-sensitive: `Nodepool` is refused, and the message says which one was meant."""
    meant = next((k for k in (*_KINDS, *_FOREIGN_KINDS) if k.lower() == kind.lower() and k != kind), None)
    return f"; did you mean {meant!r}? (kinds are case-sensitive)" if meant else ""


def _without_unknown_fields(
    model_cls: type[BaseModel], doc: dict[str, Any], exc: ValidationError
) -> BaseModel | None:
    """Validate again with the unknown fields removed, so their typo does not hide the other problems.

    The unknown fields are already reported; the salvaged model only feeds the cross-field checks.
    """
    errors = exc.errors(include_url=False)
    if any(e["type"] != "extra_forbidden" for e in errors):
        return None
    pruned = copy.deepcopy(doc)
    for err in errors:
        *parents, last = err["loc"]
        node: Any = pruned
        for part in parents:
            node = node[part]
        node.pop(last, None)
    try:
        return model_cls.model_validate(pruned)
    except ValidationError:
        return None


def parse_tenant_documents(docs: Iterable[Mapping[str, Any]]) -> TenantInput:
    """Validate TenantCluster and NodePool documents; raise `InvalidInput` with every problem found."""
    problems = Problems()
    seen = _Seen()
    models = _parse_models(docs, problems, seen)
    clusters = [m for m in models if isinstance(m, TenantCluster)]
    pools = [m for m in models if isinstance(m, NodePool)]
    _check_unique(clusters, pools, problems)
    by_key = {(c.metadata.namespace, c.metadata.name): c for c in clusters}
    for tc in clusters:
        check_tenant_cluster(tc, problems)
    for pool in pools:
        key = (pool.metadata.namespace, pool.spec.cluster)
        check_node_pool(pool, by_key.get(key), problems, cluster_refused=key in seen.refused_clusters)
    tenant = TenantInput(tuple(clusters), tuple(pools))
    check_vmid_overlaps(pools, problems)
    check_address_overlaps([w for tc in clusters for w in worker_pools(tc, tenant.pools_of(tc))], problems)
    for tc in clusters:
        check_ip_capacity(tc, tenant.pools_of(tc), problems)
        check_gpu_operator(tc, tenant.pools_of(tc), problems)
        check_ingress_pools(tc, tenant.pools_of(tc), problems)
    if not clusters and not problems.errors:
        hint = "; the Platform in it is read with --platform FILE" if "Platform" in seen.foreign else ""
        problems.error("input", f"no TenantCluster in the input{hint}")
    problems.raise_if_errors()
    return TenantInput(tuple(clusters), tuple(pools), tuple(problems.warnings))


def _check_unique(clusters: list[TenantCluster], pools: list[NodePool], problems: Problems) -> None:
    for kind, objs in (("TenantCluster", clusters), ("NodePool", pools)):
        seen: set[tuple[str, str]] = set()
        for obj in objs:
            key = (obj.metadata.namespace, obj.metadata.name)
            if key in seen:
                problems.error(
                    f"{ref(kind, obj.metadata.name)}.metadata.name",
                    f"{kind} {key[0]}/{key[1]} appears more than once in the input",
                )
            seen.add(key)


def parse_observed(docs: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], ObservedState]:
    """ObservedState documents keyed by (namespace, cluster name)."""
    problems = Problems()
    models = _parse_models(docs, problems, _Seen())
    out: dict[tuple[str, str], ObservedState] = {}
    for m in models:
        if not isinstance(m, ObservedState):
            problems.error(ref(type(m).__name__, "?"), "an observed-state file holds only ObservedState documents")
            continue
        check_observed_state(m, problems)
        _check_cas(m, problems)
        out[(m.metadata.namespace, m.metadata.name)] = m
    problems.raise_if_errors()
    return out


def _check_cas(observed: ObservedState, problems: Problems) -> None:
    at = ref("ObservedState", observed.metadata.name)
    for name, value in (("kubernetesCA", observed.kubernetes_ca), ("talosCA", observed.talos_ca)):
        if (why := ca_bundle_problem(value)) is not None:
            problems.error(f"{at}.{name}", f"{value[:40]!r}… {why}" if len(value) > 40 else f"{value!r} {why}")
