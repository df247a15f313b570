"""The emulator's own semantics, checked through the operator's client over loopback HTTP."""

from __future__ import annotations

import asyncio

import pytest
from kube_emulator import IMMUTABLE_TCT, PVC_PROTECTION, Fault, KubeEmulator, declare, matches_selector

from tenantctl.operator.kube.client import (
    APIError,
    Connection,
    ImmutableFieldError,
    KubeClient,
    Resource,
    RetryPolicy,
    TransientAPIError,
)

pytestmark = [pytest.mark.timeout(10), pytest.mark.looptime]

SECRETS = Resource("v1", "Secret", "secrets", True)
PVCS = Resource("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True)
PODS = Resource("v1", "Pod", "pods", True)
TCT = Resource("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate", "talosconfigtemplates", True)
FAST = RetryPolicy(timeout=2.0, backoffs=(0.01, 0.01))


def client(emulator: KubeEmulator) -> KubeClient:
    return KubeClient(Connection.from_server(str(emulator.url).rstrip("/")), retry=FAST)


def secret(name: str, value: str, labels: dict[str, str] | None = None) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": "ns", "labels": labels or {}},
        "stringData": {"k": value},
    }


async def test_apply_creates_then_a_repeat_writes_nothing(mgmt: KubeEmulator) -> None:
    async with client(mgmt) as api:
        await api.apply(SECRETS, secret("a", "1"))
        await api.apply(SECRETS, secret("a", "1"))
        await api.apply(SECRETS, secret("a", "2"))
    assert [e.verb for e in mgmt.writes()] == ["apply-create", "apply-update"]
    assert mgmt.get("v1/secrets", "ns", "a")["stringData"] == {"k": "2"}  # type: ignore[index]


async def test_list_filters_by_label_selector(mgmt: KubeEmulator) -> None:
    async with client(mgmt) as api:
        await api.apply(SECRETS, secret("a", "1", {"c": "x"}))
        await api.apply(SECRETS, secret("b", "1", {"c": "y"}))
        names = [o["metadata"]["name"] for o in await api.list(SECRETS, "ns", {"c": "y"})]
    assert names == ["b"]


async def test_discovery_answers_none_for_an_absent_crd(mgmt: KubeEmulator) -> None:
    async with client(mgmt) as api:
        assert await api.resource("cdi.kubevirt.io/v1beta1", "DataVolume") is None
        assert await api.resource("v1", "Secret") == SECRETS


async def test_talos_config_template_spec_is_immutable(mgmt: KubeEmulator) -> None:
    declare(mgmt, [("bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates", "TalosConfigTemplate", True, ())])
    tct = {"apiVersion": TCT.api_version, "kind": TCT.kind, "metadata": {"name": "t", "namespace": "ns"}}
    async with client(mgmt) as api:
        await api.apply(TCT, {**tct, "spec": {"v": 1}})
        await api.apply(TCT, {**tct, "spec": {"v": 1}, "metadata": {**tct["metadata"], "labels": {"a": "b"}}})
        with pytest.raises(ImmutableFieldError, match=IMMUTABLE_TCT):
            await api.apply(TCT, {**tct, "spec": {"v": 2}})


async def test_injected_faults_are_retried_and_then_surface(mgmt: KubeEmulator) -> None:
    mgmt.fail(Fault("PATCH", "secrets", status=409, times=2))
    async with client(mgmt) as api:
        await api.apply(SECRETS, secret("a", "1"))
        mgmt.fail(Fault("PATCH", "secrets", status=500, times=5))
        with pytest.raises(TransientAPIError):
            await api.apply(SECRETS, secret("a", "2"))
    assert mgmt.get("v1/secrets", "ns", "a")["stringData"] == {"k": "1"}  # type: ignore[index]


async def test_a_silent_server_times_out_and_is_retried(mgmt: KubeEmulator) -> None:
    mgmt.fail(Fault("GET", "secrets", hang=0.5, times=1))
    retry = RetryPolicy(timeout=0.1, backoffs=(0.01,))
    api = KubeClient(Connection.from_server(str(mgmt.url).rstrip("/")), retry=retry)
    async with api:
        assert await api.get(SECRETS, "missing", "ns") is None


async def test_a_claim_in_use_goes_once_its_pod_does_and_then_its_disk_is_freed(tenant: KubeEmulator) -> None:
    tenant.pv_release_delay = 0.05
    tenant.put("v1/persistentvolumes", {"metadata": {"name": "pv1"}, "spec": {"csi": {"volumeHandle": "disk-1"}}})
    tenant.put(
        "v1/persistentvolumeclaims",
        {"metadata": {"name": "c1", "namespace": "ns", "finalizers": [PVC_PROTECTION]}, "spec": {"volumeName": "pv1"}},
    )
    volumes = [{"name": "d", "persistentVolumeClaim": {"claimName": "c1"}}]
    tenant.put("v1/pods", {"metadata": {"name": "p", "namespace": "ns"}, "spec": {"volumes": volumes}})
    async with client(tenant) as api:
        await api.delete(PVCS, "c1", "ns")
        assert tenant.get("v1/persistentvolumeclaims", "ns", "c1") is not None
        await api.delete(PODS, "p", "ns")
    assert tenant.get("v1/persistentvolumeclaims", "ns", "c1") is None
    await asyncio.wait_for(tenant.settle(), 2)
    assert tenant.freed_disks == ["disk-1"]
    assert tenant.get("v1/persistentvolumes", None, "pv1") is None


async def test_an_apply_on_an_object_another_controller_owns_sets_only_the_applied_leaves(mgmt: KubeEmulator) -> None:
    declare(mgmt, [("kamaji.clastix.io/v1alpha1/tenantcontrolplanes", "TenantControlPlane", True, ())])
    tcps = Resource("kamaji.clastix.io/v1alpha1", "TenantControlPlane", "tenantcontrolplanes", True)
    mgmt.put("kamaji.clastix.io/v1alpha1/tenantcontrolplanes", {
        "metadata": {"name": "t", "namespace": "ns"},
        "spec": {"controlPlane": {"service": {"serviceType": "LoadBalancer", "additionalPorts": [{"name": "x"}]}},
                 "kubernetes": {"version": "v1.33.0"}},
    })
    applied = {"apiVersion": "kamaji.clastix.io/v1alpha1", "kind": "TenantControlPlane",
               "metadata": {"name": "t", "namespace": "ns"},
               "spec": {"controlPlane": {"service": {"additionalPorts": [{"name": "y"}]}}}}
    async with client(mgmt) as api:
        await api.apply(tcps, applied)
        await api.apply(tcps, applied)
    live = mgmt.get("kamaji.clastix.io/v1alpha1/tenantcontrolplanes", "ns", "t")
    assert live is not None
    service = live["spec"]["controlPlane"]["service"]
    assert service == {"serviceType": "LoadBalancer", "additionalPorts": [{"name": "y"}]}
    assert live["spec"]["kubernetes"] == {"version": "v1.33.0"}
    assert [e.verb for e in mgmt.writes()] == ["apply-update"], "the repeat is a no-op"


async def test_a_json_patch_applies_only_while_its_tests_hold(mgmt: KubeEmulator) -> None:
    async with client(mgmt) as api:
        await api.apply(SECRETS, secret("a", "1"))
        replace = [{"op": "test", "path": "/stringData", "value": {"k": "1"}},
                   {"op": "replace", "path": "/stringData", "value": {"k": "2"}}]
        await api.json_patch(SECRETS, "a", "ns", replace)
        with pytest.raises(APIError) as refused:
            await api.json_patch(SECRETS, "a", "ns", replace)
    assert refused.value.status == 422
    assert mgmt.get("v1/secrets", "ns", "a")["stringData"] == {"k": "2"}  # type: ignore[index]


async def test_an_object_being_deleted_takes_no_new_finalizer_and_goes_with_its_last(mgmt: KubeEmulator) -> None:
    held = {**secret("a", "1"), "metadata": {"name": "a", "namespace": "ns", "finalizers": ["x/a"]}}
    async with client(mgmt) as api:
        await api.apply(SECRETS, held)
        await api.delete(SECRETS, "a", "ns")
        with pytest.raises(APIError, match="no new finalizers") as refused:
            await api.merge_patch(SECRETS, "a", "ns", {"metadata": {"finalizers": ["x/a", "x/b"]}})
        assert refused.value.status == 422
        await api.merge_patch(SECRETS, "a", "ns", {"metadata": {"finalizers": []}})
    assert mgmt.get("v1/secrets", "ns", "a") is None


async def test_an_applied_crd_is_served_and_a_namespace_is_an_object_of_its_own(mgmt: KubeEmulator) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Widget", "plural": "widgets"},
                    "versions": [{"name": "v1", "served": True, "subresources": {"status": {}}}]}}
    crds = Resource("apiextensions.k8s.io/v1", "CustomResourceDefinition", "customresourcedefinitions", False)
    namespaces = Resource("v1", "Namespace", "namespaces", False)
    async with client(mgmt) as api:
        assert await api.resource("example.com/v1", "Widget") is None
        await api.apply(crds, crd)
    async with client(mgmt) as api:
        assert await api.resource("example.com/v1", "Widget") == Resource("example.com/v1", "Widget", "widgets", True)
        await api.apply(namespaces, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
        assert (await api.get(namespaces, "team") or {})["metadata"]["name"] == "team"
        assert await api.delete(namespaces, "team")
    assert mgmt.get("v1/namespaces", None, "team") is None


async def test_a_watch_from_a_version_streams_only_what_is_newer(mgmt: KubeEmulator) -> None:
    mgmt.put("v1/secrets", secret("listed", "a"))
    async with client(mgmt) as api:
        _, version = await api.list_versioned(SECRETS)
        mgmt.put("v1/secrets", secret("added", "b"))
        async for event in api.watch(SECRETS, version):
            assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "added"), "not replayed"
            break
    assert mgmt.tally["WATCH", "secrets"] == 1 and mgmt.tally["LIST", "secrets"] == 1


async def test_a_list_comes_in_pages_of_one_version(mgmt: KubeEmulator) -> None:
    for i in range(5):
        mgmt.put("v1/secrets", secret(f"s{i}", "a"))
    async with client(mgmt) as api:
        pages = [page async for page in api.list_pages(SECRETS, limit=2)]
    assert [[s["metadata"]["name"] for s in items] for items, _ in pages] == [["s0", "s1"], ["s2", "s3"], ["s4"]]
    assert len({version for _, version in pages}) == 1


async def test_a_selected_watch_sends_what_starts_matching_added_and_what_stops_deleted_as_it_matched(
    mgmt: KubeEmulator,
) -> None:
    """As kube-apiserver's watch cache does (tests/real/test_shards.py proves it there): the shard label's
    handover rests on it."""
    mgmt.put("v1/secrets", secret("moving", "a"))
    moved = secret("moving", "a")
    async with client(mgmt) as api:
        _, version = await api.list_versioned(SECRETS)
        mgmt.put("v1/secrets", secret("marker", "b", {"shard": "1-of-2"}))
        seen = []
        async for event in api.watch(SECRETS, version, "shard in (0-of-2, 1-of-2)"):
            seen.append((event["type"], event["object"]["metadata"]["name"], event["object"]["metadata"].get("labels")))
            if len(seen) == 1:  # the marker: the watch is live (the emulator streams no history), move the other
                mgmt.put("v1/secrets", {**moved, "metadata": {**moved["metadata"], "labels": {"shard": "0-of-2"}}})
                mgmt.put("v1/secrets", {**moved, "metadata": {**moved["metadata"], "labels": {"shard": "1-of-3"}}})
            if len(seen) == 3:
                break
    assert seen[1:] == [("ADDED", "moving", {"shard": "0-of-2"}), ("DELETED", "moving", {"shard": "0-of-2"})]


@pytest.mark.parametrize(
    ("expr", "labels", "matches"),
    [
        ("shard notin (0-of-2,1-of-2)", {}, True),
        ("shard notin (0-of-2,1-of-2)", {"shard": "0-of-3"}, True),
        ("shard notin (0-of-2,1-of-2)", {"shard": "1-of-2"}, False),
        ("shard in (0-of-2, 1-of-2),app=x", {"shard": "1-of-2", "app": "x"}, True),
        ("shard in (0-of-2)", {}, False),
        ("!shard", {"shard": "0-of-2"}, False),
        ("shard=0-of-2", {"shard": "0-of-2"}, True),
    ],
)
def test_set_based_selectors_match_as_the_servers_do(expr: str, labels: dict[str, str], matches: bool) -> None:
    assert matches_selector(labels, expr) is matches
