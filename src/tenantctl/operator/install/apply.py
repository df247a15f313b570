"""`tenantctl install --apply`: server-side apply what install renders, and prune the operator workloads
and peerings of any other layout, so two operators never keep reconciling the same tenants.

A layout is what `--shards` renders: one StatefulSet and one ClusterKopfPeering per shard. Anything
labelled as the tenantctl operator that this render does not contain — the single Deployment of
releases before shards, the StatefulSets of surplus shards, one in a namespace the operator left — is
a leftover. Leftovers are refused before anything is written, unless `--prune` deletes them once the
new render is applied (the new shards then take their tenants' finalizers over, see `finalizers`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.config.identity import OPERATOR_LABELS, Subject
from tenantctl.operator.install.objects import NAME, PEERING_GROUP, PEERING_VERSION, SHARDS_LABEL
from tenantctl.operator.kube.client import Connection, KubeClient, NotFoundError, Resource
from tenantctl.operator.phases.rights import rights_binding
from tenantctl.problems import InvalidInput, Problem
from tenantctl.spec import API_VERSION

__all__ = ["FIELD_MANAGER", "WORKLOAD_SELECTOR", "Leftover", "apply_install", "leftovers", "prune_command"]

FIELD_MANAGER = "tenantctl-install"
WORKLOAD_SELECTOR = dict(OPERATOR_LABELS)
# What a layout consists of: workloads that reconcile, and the peerings their replicas meet in.
_LAYOUT_KINDS = (("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), (f"{PEERING_GROUP}/{PEERING_VERSION}",
                                                                          "ClusterKopfPeering"))
_ESTABLISHING = 30.0
"""Seconds a freshly applied CRD may take until the API server serves its kind."""


@dataclass(frozen=True)
class Leftover:
    """An operator workload or peering of the tenantctl operator that the render no longer holds."""

    kind: str
    namespace: str | None
    name: str
    resource: Resource

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}" if self.namespace else f"{self.kind} {self.name}"


def prune_command(shards: int) -> str:
    """The kubectl commands that delete what `--prune` would, for output applied by other means."""
    selector = ",".join(f"{k}={v}" for k, v in WORKLOAD_SELECTOR.items()) + f",{SHARDS_LABEL}!={shards}"
    return (
        f"kubectl delete deployment,statefulset --all-namespaces -l '{selector}'\n"
        f"kubectl delete clusterkopfpeering -l '{selector}'"
    )


def _key(obj: Mapping[str, Any]) -> tuple[str, str | None, str]:
    meta = obj["metadata"]
    return obj["kind"], meta.get("namespace"), meta["name"]


async def leftovers(api: KubeClient, objects: Sequence[Mapping[str, Any]]) -> list[Leftover]:
    """The operator's workloads and peerings, in every namespace, that `objects` does not contain."""
    rendered = {_key(o) for o in objects}
    found: list[Leftover] = []
    for api_version, kind in _LAYOUT_KINDS:
        res = await api.resource(api_version, kind)
        if res is None:
            continue
        for live in await api.list(res, None, WORKLOAD_SELECTOR):
            key = (kind, live["metadata"].get("namespace"), live["metadata"]["name"])
            if key not in rendered:
                found.append(Leftover(kind, key[1], key[2], res))
    return found


async def _resource(connection: Connection, api: KubeClient, obj: Mapping[str, Any], crds: set[str]) -> Resource:
    """Where `obj` is served; a kind whose CRD was just applied is waited for until it is established."""
    api_version, kind = obj["apiVersion"], obj["kind"]
    found = await api.resource(api_version, kind)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + _ESTABLISHING
    while found is None and f"{api_version}/{kind}" in crds and loop.time() < deadline:
        await asyncio.sleep(0.5)
        async with KubeClient(connection, retry=api.retry) as fresh:  # discovery is cached per client
            found = await fresh.resource(api_version, kind)
    if found is None:
        raise NotFoundError(404, "NotFound", f"the cluster does not serve {kind} ({api_version})")
    return found


def _defined_kinds(objects: Sequence[Mapping[str, Any]]) -> set[str]:
    """`group/version/Kind` of every kind a rendered CRD defines."""
    return {
        f"{o['spec']['group']}/{v['name']}/{o['spec']['names']['kind']}"
        for o in objects if o["kind"] == "CustomResourceDefinition"
        for v in o["spec"]["versions"] if v.get("served")
    }


async def _unserved(api: KubeClient, objects: Sequence[Mapping[str, Any]], crds: set[str]) -> list[Problem]:
    """Kinds the render needs that neither the cluster serves nor a rendered CRD defines (cert-manager's…)."""
    missing: dict[str, Problem] = {}
    for obj in objects:
        api_version, kind = obj["apiVersion"], obj["kind"]
        if f"{api_version}/{kind}" not in crds and await api.resource(api_version, kind) is None:
            missing.setdefault(kind, Problem(
                f"{kind} ({api_version})", "not served by the management cluster: install what provides it first"
            ))
    return list(missing.values())


async def _missing_namespaces(api: KubeClient, objects: Sequence[Mapping[str, Any]]) -> list[Problem]:
    """Namespaces the render writes into that neither exist nor are rendered: a tenant's, named by `-f`,
    is the platform admin's to create (found on the real API server: without this check the CRDs and
    the cluster RBAC were applied before the first Role was refused, half an install)."""
    rendered = {o["metadata"]["name"] for o in objects if (o["apiVersion"], o["kind"]) == ("v1", "Namespace")}
    wanted = sorted({str(o["metadata"]["namespace"]) for o in objects if o["metadata"].get("namespace")} - rendered)
    namespaces = await api.resource("v1", "Namespace")
    if namespaces is None or not wanted:
        return []
    users: dict[str, list[str]] = {}
    for obj in objects:
        if obj["metadata"].get("namespace") in wanted:
            users.setdefault(obj["metadata"]["namespace"], []).append(f"{obj['kind']} {obj['metadata']['name']}")
    return [
        Problem(f"namespace {ns}", f"does not exist; create it first (it holds {', '.join(users[ns])})")
        for ns in wanted if await api.get(namespaces, ns) is None
    ]


async def _open_tenant_namespaces(api: KubeClient, objects: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The operator's tenant role bound in every namespace that holds a TenantCluster now and is not opened by
    the render already: an upgrade from a release whose operator wrote everywhere keeps its tenants going."""
    res = await api.resource(API_VERSION, "TenantCluster")
    account = next((o for o in objects if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == NAME), None)
    if res is None or account is None:
        return []
    opened = {o["metadata"]["namespace"] for o in objects
              if o["kind"] == "RoleBinding" and o["metadata"]["name"] == NAME}
    live = {c["metadata"]["namespace"] for c in await api.list(res)}
    subject = Subject("ServiceAccount", NAME, account["metadata"]["namespace"])
    return [rights_binding(ns, subject) for ns in sorted(live - opened)]


async def apply_install(
    connection: Connection,
    objects: Sequence[Mapping[str, Any]],
    prune: bool,
    say: Callable[[str], None],
) -> None:
    """Refuse leftovers without `prune` and kinds nobody serves, then apply in order, then prune."""
    crds = _defined_kinds(objects)
    async with KubeClient(connection, field_manager=FIELD_MANAGER) as api:
        objects = [*objects, *await _open_tenant_namespaces(api, objects)]
        stale = await leftovers(api, objects)
        problems = await _unserved(api, objects, crds) + await _missing_namespaces(api, objects)
        if stale and not prune:
            problems += [
                Problem(str(s), "an operator workload or peering this render does not hold; it would go on "
                                "reconciling tenants beside the new one: add --prune to delete it")
                for s in stale
            ]
        if problems:
            raise InvalidInput(problems)
        for obj in objects:
            res = await _resource(connection, api, obj, crds)
            await api.apply(res, obj)
            namespace, name = obj["metadata"].get("namespace"), obj["metadata"]["name"]
            say(f"applied {obj['kind']} {namespace}/{name}" if namespace else f"applied {obj['kind']} {name}")
        for leftover in stale:
            await api.delete(leftover.resource, leftover.name, leftover.namespace)
            say(f"pruned {leftover}")
