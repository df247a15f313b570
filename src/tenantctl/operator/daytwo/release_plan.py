"""`tenantctl plan --against-release`: what upgrading the installed operator to this release does to each
live tenant, before the upgrade, so it can be planned like a spec change.

Each live TenantCluster is taken as the cluster holds it (spec and NodePools unchanged) and planned as
this release's operator would reconcile it (`plan_cluster`: the Platform's settings, the patch policy,
the live machine templates kept), then judged: `none` (nothing written), `re-apply` (objects change in
place, no worker replaced), `roll` (a worker replaced or a Kubernetes version moved), `refused` (this
release cannot render the spec: the operator leaves every live object as it is and says why).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from tenantctl.operator.daytwo.plan import Action, TenantPlan, plan_cluster
from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.phases.platform import PlatformReader
from tenantctl.problems import InvalidInput
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.compat import DEFAULT_KAMAJI

__all__ = ["ReleasePlan", "Verdict", "judge", "plan_release", "render_release_text"]

API = "tenantctl.io/v1alpha1"
# Field paths whose change replaces workers or moves a version (the rest of an object changes in place).
_ROLLING_FIELDS = {"MachineDeployment": "spec.template", "KamajiControlPlane": "spec.version"}


class Verdict(StrEnum):
    NONE = "none"
    REAPPLY = "re-apply"
    ROLL = "roll"
    REFUSED = "refused"


@dataclass
class ReleasePlan:
    namespace: str
    name: str
    verdict: Verdict
    why: list[str] = field(default_factory=list)
    pending: dict[str, Any] = field(default_factory=dict)
    summary: dict[str, int] = field(default_factory=dict)

    def data(self) -> dict[str, Any]:
        return {"namespace": self.namespace, "name": self.name, "verdict": self.verdict.value, "why": self.why,
                "pending": self.pending, "summary": self.summary}


def _rolling_lines(kind: str, diff: Sequence[str]) -> list[str]:
    prefix = _ROLLING_FIELDS.get(kind)
    return [line for line in diff if prefix is not None and line[2:].startswith(prefix)]


def judge(plan: TenantPlan) -> tuple[Verdict, list[str]]:
    """A plan of an unchanged spec, as the verdict on the release and the changes that decide it."""
    rolls = [*plan.rolling, *(f"{c.ref}: {c.note}" for c in plan.rotations)]
    rolls += [f"{c.ref} {line.strip()}" for c in plan.changes if c.action is Action.UPDATE
              for line in _rolling_lines(c.kind, c.diff)]
    rolls += plan.upgrade
    if rolls:
        return Verdict.ROLL, rolls
    changed = [f"{c.action.value} {c.ref}" for c in plan.changes if c.action is not Action.NOOP]
    return (Verdict.REAPPLY, changed) if changed else (Verdict.NONE, [])


def _documents_of(cluster: Mapping[str, Any], pools: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    name = cluster["metadata"]["name"]
    return [dict(cluster), *(dict(p) for p in pools if (p.get("spec") or {}).get("cluster") == name)]


async def plan_release(api: KubeClient, namespace: str | None = None, platform: str | None = None) -> list[ReleasePlan]:
    """Every live tenant (of `namespace`, or all), planned as this release's operator would reconcile it."""
    reader = PlatformReader(platform) if platform else PlatformReader()
    settings = await reader.settings(api)
    clusters_res = await api.resource(API, "TenantCluster")
    pools_res = await api.resource(API, "NodePool")
    if clusters_res is None:
        return []
    scope = (namespace,) if namespace else ()
    clusters = await api.list(clusters_res, *scope)
    pools = await api.list(pools_res, *scope) if pools_res is not None else []
    out: list[ReleasePlan] = []
    for body in sorted(clusters, key=lambda c: (c["metadata"]["namespace"], c["metadata"]["name"])):
        ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
        if settings.refusal is not None:
            out.append(ReleasePlan(ns, name, Verdict.REFUSED, [f"the Platform is refused: {settings.refusal}"]))
            continue
        docs = _documents_of(body, [p for p in pools if p["metadata"]["namespace"] == ns])
        try:
            tenant = parse_tenant_documents(docs)
            cluster = tenant.clusters[0]
            plan = await plan_cluster(api, cluster, tenant.pools_of(cluster), docs, settings.charts, settings.images,
                                      kamaji=settings.kamaji or DEFAULT_KAMAJI,
                                      platform_policy=settings.patch_upgrades)
        except InvalidInput as exc:
            out.append(ReleasePlan(ns, name, Verdict.REFUSED, [str(p) for p in exc.errors]))
            continue
        verdict, why = judge(plan)
        why += [str(w) for w in tenant.warnings]
        out.append(ReleasePlan(ns, name, verdict, why, dict(plan.pending), plan.counts()))
    return out


def render_release_text(plans: Sequence[ReleasePlan]) -> str:
    lines = []
    for plan in plans:
        lines.append(f"TenantCluster {plan.namespace}/{plan.name}: {plan.verdict.value}")
        lines += [f"  {line}" for line in plan.why]
        if plan.pending.get("kubernetes"):
            lines.append(f"  pending patch {plan.pending['kubernetes']}: {plan.pending['reason']}")
        lines += [f"  pending: {line}" for line in plan.pending.get("render") or ()]
    return "\n".join(lines) + "\n" if lines else "no TenantCluster in the management cluster\n"
