"""`tenantctl get`: one row per TenantCluster or NodePool, read from the management cluster.

Read-only: `get`/`list` on tenantclusters and nodepools (tenantctl.io) and machinedeployments
(cluster.x-k8s.io) are all it needs; pools' ready/desired come from their MachineDeployments.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from tenantctl.operator.kube.client import KubeClient
from tenantctl.render.meta import CLUSTER_LABEL, POOL_LABEL

__all__ = ["PoolRow", "TenantRow", "age", "list_pools", "list_tenants", "machine_deployments"]

Obj = dict[str, Any]
API = "tenantctl.io/v1alpha1"
CAPI = "cluster.x-k8s.io/v1beta1"


@dataclass(frozen=True)
class TenantRow:
    namespace: str
    name: str
    substrate: str
    version: str
    phase: str
    endpoint: str
    pools_ready: int
    pools_desired: int
    age: str
    ready_reason: str
    ready_message: str

    HEADERS = ("NAMESPACE", "NAME", "SUBSTRATE", "VERSION", "PHASE", "ENDPOINT", "POOLS", "AGE")
    WIDE = ("READY-REASON", "MESSAGE")

    def cells(self, wide: bool) -> list[str]:
        cells = [self.namespace, self.name, self.substrate, self.version, self.phase, self.endpoint,
                 f"{self.pools_ready}/{self.pools_desired}", self.age]
        return [*cells, self.ready_reason, self.ready_message] if wide else cells

    def data(self) -> Obj:
        return asdict(self)


@dataclass(frozen=True)
class PoolRow:
    namespace: str
    name: str
    cluster: str
    ready: int
    desired: int
    phase: str
    machine_deployment: str
    age: str

    HEADERS = ("NAMESPACE", "NAME", "CLUSTER", "READY", "PHASE", "AGE")
    WIDE = ("MACHINEDEPLOYMENT",)

    def cells(self, wide: bool) -> list[str]:
        cells = [self.namespace, self.name, self.cluster, f"{self.ready}/{self.desired}", self.phase, self.age]
        return [*cells, self.machine_deployment] if wide else cells

    def data(self) -> Obj:
        return asdict(self)


def age(timestamp: str | None, now: datetime.datetime) -> str:
    """kubectl's short age: 45s, 12m, 5h, 3d."""
    if not timestamp:
        return "-"
    then = datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    seconds = max(0, int((now - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _status(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return obj.get("status") or {}


def _ready_condition(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    return next((c for c in _status(obj).get("conditions") or [] if c.get("type") == "Ready"), {})


async def _list(api: KubeClient, api_version: str, kind: str, namespace: str | None) -> list[Obj]:
    """Objects of a kind, or none when the kind is not served (CAPI not installed yet)."""
    res = await api.resource(api_version, kind)
    return [] if res is None else await api.list(res, namespace)


async def machine_deployments(api: KubeClient, namespace: str | None) -> dict[tuple[str, str, str], list[Obj]]:
    """MachineDeployments by (namespace, cluster, pool), from the inventory labels they carry; a spread
    pool has one per node group, in name order."""
    out: dict[tuple[str, str, str], list[Obj]] = {}
    for md in await _list(api, CAPI, "MachineDeployment", namespace):
        meta = md["metadata"]
        labels = meta.get("labels") or {}
        if CLUSTER_LABEL in labels and POOL_LABEL in labels:
            out.setdefault((meta["namespace"], labels[CLUSTER_LABEL], labels[POOL_LABEL]), []).append(md)
    for mds in out.values():
        mds.sort(key=lambda md: str(md["metadata"]["name"]))
    return out


def _replicas(mds: Sequence[Mapping[str, Any]]) -> tuple[int, int]:
    """(ready, desired) summed over a pool's MachineDeployments."""
    ready = sum(int(_status(md).get("readyReplicas") or 0) for md in mds)
    return ready, sum(int((md.get("spec") or {}).get("replicas") or 0) for md in mds)


def _version(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    """The spec's version, `running→target` while an upgrade runs (the control plane's, then the pools'), or
    `running (patch pending)` while the patch policy holds a newer patch back."""
    upgrade = status.get("upgrade") or {}
    pending = (status.get("pending") or {}).get("kubernetes")
    if not upgrade and pending:
        running = (status.get("versions") or {}).get("controlPlane") or spec.get("version", "-")
        return f"{running} ({pending} pending)"
    if not upgrade:
        return str(spec.get("version", "-"))
    running = (status.get("versions") or {}).get("controlPlane", "-")
    return f"{running}→{(upgrade.get('target') or {}).get('kubernetes', spec.get('version', '-'))}"


async def list_tenants(api: KubeClient, namespace: str | None, now: datetime.datetime) -> list[TenantRow]:
    tenants = await _list(api, API, "TenantCluster", namespace)
    mds = await machine_deployments(api, namespace)
    rows: list[TenantRow] = []
    for tc in tenants:
        meta, spec, status = tc["metadata"], tc.get("spec") or {}, _status(tc)
        ns, name = meta["namespace"], meta["name"]
        ready = desired = 0
        for (md_ns, cluster, _), md in mds.items():
            if (md_ns, cluster) == (ns, name):
                r, d = _replicas(md)
                ready, desired = ready + r, desired + d
        cond = _ready_condition(tc)
        rows.append(TenantRow(
            namespace=ns, name=name, substrate=str(spec.get("substrate", "-")), version=_version(spec, status),
            phase=str(status.get("phase") or "-"), endpoint=str(status.get("endpoint") or "-"),
            pools_ready=ready, pools_desired=desired, age=age(meta.get("creationTimestamp"), now),
            ready_reason=str(cond.get("reason") or "-"), ready_message=str(cond.get("message") or ""),
        ))
    return sorted(rows, key=lambda r: (r.namespace, r.name))


async def list_pools(api: KubeClient, namespace: str | None, now: datetime.datetime) -> list[PoolRow]:
    pools = await _list(api, API, "NodePool", namespace)
    mds = await machine_deployments(api, namespace)
    rows: list[PoolRow] = []
    for pool in pools:
        meta, spec = pool["metadata"], pool.get("spec") or {}
        ns, name, cluster = meta["namespace"], meta["name"], str(spec.get("cluster", "-"))  # a namespaced kind
        pool_mds = mds.get((ns, cluster, name), [])
        ready, desired = _replicas(pool_mds)
        rows.append(PoolRow(
            namespace=ns, name=name, cluster=cluster, ready=ready, desired=desired,
            phase=str(_status(pool).get("phase") or "-"),
            machine_deployment=",".join(md["metadata"]["name"] for md in pool_mds) or "-",
            age=age(meta.get("creationTimestamp"), now),
        ))
    return sorted(rows, key=lambda r: (r.namespace, r.cluster, r.name))


def table(rows: Sequence[TenantRow] | Sequence[PoolRow], headers: Sequence[str], wide: bool) -> str:
    """Left-aligned columns separated by three spaces, as kubectl prints them."""
    lines = [list(headers), *(r.cells(wide) for r in rows)]
    widths = [max(len(line[i]) for line in lines) for i in range(len(headers))]
    return "\n".join("   ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip() for line in lines)
