"""Two tenants in one namespace: what the operator does for one never touches the other's objects."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from kube_emulator import KubeEmulator
from operator_support import (
    condition,
    eventually,
    management,
    one_more_pass,
    quiet,
    running_operator,
    seed_control_plane,
    seed_documents,
)

from tenant_support import load_example
from tenantctl.operator.kube.client import Connection, KubeClient, Resource

pytestmark = [pytest.mark.timeout(30), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
NP = "tenantctl.io/v1alpha1/nodepools"
MD = "cluster.x-k8s.io/v1beta1/machinedeployments"
NODE_POOLS = Resource("tenantctl.io/v1alpha1", "NodePool", "nodepools", True)
CLUSTERS = Resource("tenantctl.io/v1alpha1", "TenantCluster", "tenantclusters", True)
DATA_VOLUMES = "cdi.kubevirt.io/v1beta1/datavolumes"
NS = "tenant-demo"


def _neighbour(docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The same tenant again as `other`, its pools renamed so NodePool names stay unique."""
    out = copy.deepcopy(docs)
    for d in out:
        if d["kind"] == "TenantCluster":
            d["metadata"]["name"] = "other"
        else:
            d["metadata"]["name"] = f"o{d['metadata']['name']}"
            d["spec"]["cluster"] = "other"
    return out


def _ready(mgmt: KubeEmulator, name: str) -> bool:
    return condition(mgmt.get(TC, NS, name), "Ready").get("status") == "True"


async def test_pruning_one_clusters_pool_leaves_the_neighbours_objects(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    demo = load_example("kubevirt.yaml")
    other = _neighbour(demo)
    management(mgmt)
    seed_documents(mgmt, demo + other)
    url = str(tenant.url).rstrip("/")
    seed_control_plane(mgmt, demo, url)
    seed_control_plane(mgmt, other, url, address="192.0.2.11")
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt, "demo") and _ready(mgmt, "other"), timeout=20)
        before = {o["metadata"]["name"] for o in mgmt.live("machinedeployments")}
        assert {"demo-md0", "demo-big", "other-omd0", "other-obig"} <= before
        since = len(mgmt.writes())
        async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
            await api.delete(NODE_POOLS, "big", NS)
        await eventually(lambda: mgmt.get(MD, NS, "demo-big") is None, timeout=20)
    deleted = [(e.plural, e.name) for e in mgmt.writes()[since:] if e.verb == "delete"]
    assert not [d for d in deleted if d[1].startswith("other")], deleted
    assert mgmt.get(MD, NS, "other-obig") is not None and mgmt.get(MD, NS, "other-omd0") is not None


async def test_tearing_one_cluster_down_leaves_the_neighbours_releases_and_disks(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    demo = load_example("kubevirt.yaml")
    other = _neighbour(demo)
    management(mgmt, cdi=True)
    seed_documents(mgmt, demo + other)
    url = str(tenant.url).rstrip("/")
    seed_control_plane(mgmt, demo, url)
    seed_control_plane(mgmt, other, url, address="192.0.2.11")
    for cluster in ("demo", "other"):
        mgmt.put(DATA_VOLUMES, {"metadata": {"name": f"{cluster}-md0-disk", "namespace": NS,
                                             "labels": {"cluster.x-k8s.io/cluster-name": cluster}}})
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt, "demo") and _ready(mgmt, "other"), timeout=20)
        releases = {o["metadata"]["name"] for o in mgmt.live("helmreleases")}
        assert any(r.startswith("demo-") for r in releases) and any(r.startswith("other-") for r in releases)
        async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
            await api.delete(CLUSTERS, "other", NS)
        await eventually(lambda: mgmt.get(TC, NS, "other") is None, timeout=20)
    assert mgmt.get(DATA_VOLUMES, NS, "demo-md0-disk") is not None, "the neighbour's disk stays"
    assert mgmt.get(DATA_VOLUMES, NS, "other-md0-disk") is None
    left = {o["metadata"]["name"] for o in mgmt.live("helmreleases")}
    assert {r for r in releases if r.startswith("demo-")} <= left, "the neighbour's releases stay"
    assert not {r for r in left if r.startswith("other-")}
    assert mgmt.get(MD, NS, "demo-md0") is not None


def _twin(docs: list[dict[str, Any]], namespace: str) -> list[dict[str, Any]]:
    """The same tenant, same names, in another namespace."""
    out = copy.deepcopy(docs)
    for d in out:
        d["metadata"]["namespace"] = namespace
    return out


async def test_a_same_named_tenant_of_another_namespace_is_neither_compared_nor_pruned(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """Each tenant's inventory is listed in its own namespace: `demo` of `tenant-twin` has objects named
    exactly like those of `demo` of `tenant-demo`, and removing its pool must not reach the other's."""
    demo = load_example("kubevirt.yaml")
    twin = _twin(demo, "tenant-twin")
    management(mgmt)
    seed_documents(mgmt, demo + twin)
    url = str(tenant.url).rstrip("/")
    seed_control_plane(mgmt, demo, url)
    seed_control_plane(mgmt, twin, url, address="192.0.2.11")
    twin_ready = lambda: condition(mgmt.get(TC, "tenant-twin", "demo"), "Ready").get("status") == "True"  # noqa: E731
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: _ready(mgmt, "demo") and twin_ready(), timeout=20)
        tenants = ((NS, "demo"), ("tenant-twin", "demo"))
        for key in tenants:
            await quiet(ctx, mgmt, key)
        since = len(mgmt.write_requests)
        for key in tenants:
            await one_more_pass(ctx, key)
        assert [w for w in mgmt.write_requests[since:] if w[1] != "events"] == [], "an idle pass of each writes nothing"
        async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
            await api.delete(NODE_POOLS, "big", "tenant-twin")
        await eventually(lambda: mgmt.get(MD, "tenant-twin", "demo-big") is None, timeout=20)
    assert mgmt.get(MD, NS, "demo-big") is not None, "the other namespace's pool is untouched"
