"""The validating webhook: the checks CEL cannot see, because they read other objects.

A review runs `parse_tenant_documents` — the very checks of `tenantctl validate` — over the object
under review and its neighbours as the API holds them (a pool's cluster and sibling pools, a
cluster's pools), so a refusal says what `validate` says. It refuses the problems of the object
itself, and the problems of its neighbours that this change creates (a pool that exhausts its
cluster's addresses); a neighbour that was already wrong does not block an unrelated change.

Changes that leave `spec` alone (finalizers, kopf's annotations, a deletion in progress) always pass:
the operator must be able to finish with an object a newer check would refuse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.kube.client import KubeClient, Resource
from tenantctl.operator.phases.derived import DerivedJudge
from tenantctl.operator.phases.restore import foreign_source
from tenantctl.problems import InvalidInput, Problem, Problems, Severity
from tenantctl.render import render_tenant
from tenantctl.render.meta import POOL_LABEL
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.checks import ref
from tenantctl.spec.compat import (
    DEFAULT_KAMAJI,
    KamajiRelease,
    check_change_from_live,
    check_kamaji_serves,
    spec_versions,
)

__all__ = ["Verdict", "review"]

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Verdict:
    """Refusals as `path: message` lines (empty: allowed) and warnings to hand back to the client."""

    refusals: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def _problems(docs: Sequence[Obj]) -> set[Problem]:
    if not docs:
        return set()
    try:
        return set(parse_tenant_documents([dict(d) for d in docs]).warnings)
    except InvalidInput as exc:
        return set(exc.problems)


def _cluster_of(pool: Obj) -> str:
    return str((pool.get("spec") or {}).get("cluster") or "")


def _live(objs: Sequence[Obj], excluding: str | None = None) -> list[Obj]:
    return [o for o in objs if not o["metadata"].get("deletionTimestamp") and o["metadata"]["name"] != excluding]


async def _pools(api: KubeClient, pools: Resource, namespace: str, cluster: str, excluding: str | None) -> list[Obj]:
    listed = await api.list(pools, namespace)
    return [p for p in _live(listed, excluding) if _cluster_of(p) == cluster]


def _own(problem: Problem, label: str) -> bool:
    return problem.path == label or problem.path.startswith((f"{label}.", f"{label}:"))


def _verdict(label: str, before: set[Problem], after: set[Problem]) -> Verdict:
    refused = sorted(p for p in after if p.severity is Severity.ERROR and (_own(p, label) or p not in before))
    warned = sorted(p for p in after if p.severity is Severity.WARNING and _own(p, label))
    return Verdict(tuple(f"{p.path}: {p.message}" for p in refused), tuple(f"{p.path}: {p.message}" for p in warned))


def _version_problems(label: str, new: Obj, old: Obj | None, kamaji: KamajiRelease) -> tuple[str, ...]:
    """What Kamaji would refuse of this change: a minor it cannot serve, a lowered or skipped minor.

    `plan` and `validate` say the same (`spec.compat`); a version left as it was is not judged again,
    so a tenant whose Kamaji was downgraded can still be changed otherwise.
    """
    problems = Problems()
    version, talos = spec_versions(new)
    if old is None or spec_versions(old)[0] != version:
        check_kamaji_serves(label, version, kamaji, problems)
    check_change_from_live(label, version, talos, old, problems)
    return tuple(f"{p.path}: {p.message}" for p in problems.errors)


async def _live_source(api: KubeClient, clusters: Resource, label: str, new: Obj, old: Obj | None) -> tuple[str, ...]:
    """A restore with `mode: replace` while its source TenantCluster exists (the operator refuses it too)."""
    restore = (new.get("spec") or {}).get("restore") or {}
    if restore.get("mode") != "replace" or (old is not None and (old.get("spec") or {}).get("restore") == restore):
        return ()
    source = restore.get("from") or {}
    namespace = str(source.get("namespace") or new["metadata"].get("namespace") or "")
    if not source.get("name") or await api.get(clusters, str(source["name"]), namespace) is None:
        return ()
    return (f"{label}.spec.restore.mode: replace is refused while TenantCluster {namespace}/{source['name']} "
            "exists: delete it first, or restore with mode: clone (new PKI)",)


def _foreign_source(label: str, new: Obj, old: Obj | None, allowed: bool) -> tuple[str, ...]:
    """A restore from another namespace's tenant without the Platform's leave (the operator refuses it too)."""
    restore = (new.get("spec") or {}).get("restore") or {}
    if allowed or not restore or (old is not None and (old.get("spec") or {}).get("restore") == restore):
        return ()
    source = (restore.get("from") or {}).get("namespace")
    why = foreign_source(str(new["metadata"].get("namespace") or ""), str(source) if source else None)
    return () if why is None else (f"{label}.spec.restore.from.namespace: {why}",)


async def review(
    api: KubeClient,
    clusters: Resource,
    pools: Resource,
    operation: str,
    new: Obj | None,
    old: Obj | None,
    kamaji: KamajiRelease = DEFAULT_KAMAJI,
    derived: DerivedJudge | None = None,
    restore_across_namespaces: bool = False,
) -> Verdict:
    """The verdict on one admission request of a TenantCluster or NodePool (`derived`: also judge what
    Cluster API would build from the tenant's render, with the CRDs the cluster serves;
    `restore_across_namespaces`: the Platform's leave to restore another namespace's tenant)."""
    body = new if new is not None else old
    if body is None:
        return Verdict()
    kind, meta = str(body.get("kind")), body["metadata"]
    namespace, name = str(meta.get("namespace") or ""), str(meta["name"])
    label = ref(kind, name)
    if operation == "DELETE":
        if kind != "TenantCluster":
            return Verdict()
        remaining = sorted(p["metadata"]["name"] for p in await _pools(api, pools, namespace, name, None))
        if not remaining:
            return Verdict()
        return Verdict((
            f"{label}: NodePools {', '.join(remaining)} still belong to this cluster; delete them first "
            "(a pool without its cluster is left with machines nothing reconciles)",
        ))
    if new is None or meta.get("deletionTimestamp"):
        return Verdict()
    if old is not None and old.get("spec") == new.get("spec"):
        return Verdict()
    if kind == "TenantCluster":
        neighbours = await _pools(api, pools, namespace, name, None)
        before = [old, *neighbours] if old is not None else []
        after = [new, *neighbours]
        verdict = _verdict(label, _problems(before), _problems(after))
        versions = (*_version_problems(label, new, old, kamaji), *await _live_source(api, clusters, label, new, old),
                    *_foreign_source(label, new, old, restore_across_namespaces))
        verdict = Verdict((*verdict.refusals, *versions), verdict.warnings) if versions else verdict
    else:
        cluster_name = _cluster_of(new)
        cluster = await api.get(clusters, cluster_name, namespace) if cluster_name else None
        siblings = await _pools(api, pools, namespace, cluster_name, name)
        base = [cluster, *siblings] if cluster is not None else siblings
        before = [*base, old] if old is not None else base
        after = [*base, new]
        verdict = _verdict(label, _problems(before), _problems(after))
    if verdict.refusals or derived is None:
        return verdict
    # As for the spec's own problems: the reviewed pool's, and those this change creates; not a neighbour's
    # that was already there.
    made = await _derived_refusals(api, derived, after, kamaji)
    had = {line for line, _ in await _derived_refusals(api, derived, before, kamaji)} if made else set()
    built = tuple(line for line, pool in made if line not in had or (kind == "NodePool" and pool == name))
    return Verdict(built, verdict.warnings) if built else verdict


async def _derived_refusals(api: KubeClient, derived: DerivedJudge, docs: Sequence[Obj | None],
                            kamaji: KamajiRelease) -> list[tuple[str, str | None]]:
    """What Cluster API would refuse to build from the tenant's render (planning mode: no observation, so
    every machine template and MachineDeployment, not yet the TalosConfigTemplates, which the operator's
    pass judges once the endpoint is known)."""
    try:
        tenant = parse_tenant_documents([dict(d) for d in docs if d is not None])
        if not tenant.clusters:
            return []
        objects = render_tenant(tenant, kamaji=kamaji)
    except InvalidInput:
        # A spec the checks above let through yet cannot render (a version the Kamaji check leaves
        # unjudged on purpose, a pool without its cluster): the operator's pass says why; not judged here.
        return []
    pools = {f"{o['kind']}/{o['metadata']['name']}": (o["metadata"].get("labels") or {}).get(POOL_LABEL)
             for o in objects}
    return [(f"{p.path}: {p.message}", pools.get(p.path.split(".", 1)[0]))
            for p in await derived.problems(api, objects)]
