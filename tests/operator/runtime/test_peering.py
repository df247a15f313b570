"""Replicas of one shard: the peering object `tenantctl install` renders is the one the operator joins,
RBAC lets it, and of two live replicas only the first reconciles until it leaves."""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from typing import Any

import pytest
from kopf._cogs.structs.references import CLUSTER_PEERINGS_K  # what kopf's peering looks for
from kube_emulator import KubeEmulator, declare
from operator_support import FAST, eventually, management, operator_thread, seed_documents

from tenant_support import load_example
from tenantctl.operator.config.sharding import peering_name, peering_priority
from tenantctl.operator.config.tuning import PEERING_ENV, SHARD_ENV
from tenantctl.operator.install.objects import Topology, install_objects
from tenantctl.operator.kube.client import Connection
from tenantctl.operator.runtime.flags import operator_start

pytestmark = [pytest.mark.timeout(60)]

TC = "tenantctl.io/v1alpha1/tenantclusters"
NAMESPACES = [f"tenant-{i}" for i in range(3)]


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def env_of(workload: dict[str, Any]) -> dict[str, Any]:
    container = workload["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", e.get("valueFrom")) for e in container["env"]}


def peering_crd(objects: list[dict[str, Any]]) -> dict[str, Any]:
    crds = of_kind(objects, "CustomResourceDefinition")
    (crd,) = [o for o in crds if o["spec"]["names"]["kind"] == "ClusterKopfPeering"]
    return crd


def allows(role: dict[str, Any], group: str, resource: str, verbs: set[str]) -> bool:
    granted = {v for r in role["rules"] if group in r["apiGroups"] and resource in r["resources"] for v in r["verbs"]}
    return verbs <= granted


@pytest.mark.parametrize(("shards", "replicas"), [(1, 2), (3, 2)])
def test_each_shard_joins_the_peering_install_renders_for_it_and_rbac_lets_it(shards: int, replicas: int) -> None:
    objects = install_objects(topology=Topology(shards=shards, replicas=replicas))
    crd = peering_crd(objects)
    group, plural = crd["spec"]["group"], crd["spec"]["names"]["plural"]
    served = {v["name"] for v in crd["spec"]["versions"] if v["served"]}
    assert (group, plural, crd["spec"]["scope"]) == (CLUSTER_PEERINGS_K.group, CLUSTER_PEERINGS_K.any_name, "Cluster")
    assert CLUSTER_PEERINGS_K.version in served
    role = next(r for r in of_kind(objects, "ClusterRole") if r["metadata"]["name"] == "tenantctl-operator")
    assert allows(role, group, plural, {"list", "watch", "patch"}), "kopf watches the peering and patches its status"
    rendered = {p["metadata"]["name"] for p in of_kind(objects, "ClusterKopfPeering")}
    joined = set()
    for workload in of_kind(objects, "StatefulSet"):
        env = env_of(workload)
        start = operator_start(
            {"--shard": env[SHARD_ENV], "--peering": env[PEERING_ENV]}, lambda: Connection.from_server("http://x")
        )
        assert start.peering == peering_name(start.settings.shard), "the operator's own name for its shard's peering"
        assert start.peering in rendered
        assert env["POD_NAME"] == {"fieldRef": {"fieldPath": "metadata.name"}}, "the ordinal ranks the replicas"
        assert workload["spec"]["replicas"] == replicas
        joined.add(start.peering)
    assert joined == rendered and len(rendered) == shards


def serve_peering(mgmt: KubeEmulator, objects: list[dict[str, Any]]) -> str:
    """The peering resource as its rendered CRD declares it, and the rendered peering object of shard 0/1."""
    crd = peering_crd(objects)
    spec = crd["spec"]
    version = next(v for v in spec["versions"] if v["served"])
    path = f"{spec['group']}/{version['name']}/{spec['names']['plural']}"
    subresources = tuple(version.get("subresources", ()))
    declare(mgmt, [(path, spec["names"]["kind"], spec["scope"] == "Namespaced", subresources)])
    (peering,) = of_kind(objects, "ClusterKopfPeering")
    mgmt.put(path, copy.deepcopy(peering))
    return path


async def test_of_two_replicas_of_one_shard_only_the_first_reconciles_until_it_leaves(mgmt: KubeEmulator) -> None:
    objects = install_objects(topology=Topology(shards=1, replicas=2))
    path = serve_peering(mgmt, objects)
    (workload,) = of_kind(objects, "StatefulSet")
    name = env_of(workload)[PEERING_ENV]
    pods = [f"{workload['metadata']['name']}-{ordinal}" for ordinal in range(2)]
    management(mgmt)
    for namespace in NAMESPACES:
        docs = copy.deepcopy(load_example("kubevirt.yaml"))
        for d in docs:
            d["metadata"]["namespace"] = namespace
        seed_documents(mgmt, docs)
    settings = dataclasses.replace(FAST, resync_interval=1.0)

    def peers() -> dict[str, Any]:
        return dict((mgmt.get(path, None, name) or {}).get("status") or {})

    def replica(pod: str) -> Any:
        return operator_thread(mgmt, settings, peering=name, identity=pod, priority=peering_priority(pod))

    async with contextlib.AsyncExitStack() as first_up:
        first = await first_up.enter_async_context(replica(pods[0]))
        await eventually(lambda: pods[0] in peers(), timeout=10)
        async with replica(pods[1]) as second:
            await eventually(lambda: pods[1] in peers(), timeout=10)
            await eventually(lambda: set(first.passes) == {(ns, "demo") for ns in NAMESPACES}, timeout=20)
            await eventually(lambda: all(first.passes[(ns, "demo")] >= 3 for ns in NAMESPACES), timeout=20)
            assert not second.passes, "the standby reconciled while the first replica was alive"
            await first_up.aclose()
            assert pods[0] not in peers(), "a replica leaving takes itself out of the peering"
            await eventually(lambda: set(second.passes) == {(ns, "demo") for ns in NAMESPACES}, timeout=20)
