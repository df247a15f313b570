"""The validating webhook: every cross-object refusal, with the text of `validate`; and kopf serving it.

The review reads neighbours from an emulated management API over loopback HTTP; the served webhook
is the real kopf engine answering AdmissionReviews posted to it.
"""

from __future__ import annotations

import dataclasses
import socket
import sys
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from kube_emulator import KubeEmulator
from operator_support import FAST, management, running_operator, seed_documents

from tenant_support import clone, doc, load_example
from tenantctl.operator.config.settings import WebhookSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.operator.runtime.admission import review
from tenantctl.operator.runtime.handlers import CLUSTER_WEBHOOK, NODE_POOLS, POOL_WEBHOOK, TENANT_CLUSTERS
from tenantctl.problems import InvalidInput, Problems
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.compat import DEFAULT_KAMAJI, KamajiRelease, check_version_change
from tenantctl.spec.deprecations import TALOS_VERSION_TAG
from tenantctl.spec.refusals import LIVE_ONLY, REFUSALS, Layer, refusal_for

sys.path.insert(0, str(Path(__file__).parents[2] / "spec"))
from test_refusals import CASES

pytestmark = [pytest.mark.timeout(60)]

# The object whose admission a case is about, when it is not the one its path names.
CAUSED_BY: dict[str, tuple[str, str]] = {"IP pool too small for max replicas + surge": ("NodePool", "md0")}
WEBHOOK_CASES = sorted(name for name in CASES if refusal_for(name).layer is Layer.WEBHOOK)


def reviewed(name: str) -> tuple[str, str]:
    if name in CAUSED_BY:
        return CAUSED_BY[name]
    kind, _, rest = CASES[name].path.partition("/")
    return kind, rest.split(".", 1)[0]


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def validate_lines(docs: list[dict[str, Any]]) -> list[str]:
    try:
        parse_tenant_documents(docs)
    except InvalidInput as exc:
        return [f"{p.path}: {p.message}" for p in exc.errors]
    return []


async def judged(mgmt: KubeEmulator, operation: str, new: Any, old: Any = None, kamaji: Any = DEFAULT_KAMAJI) -> Any:
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        return await review(api, TENANT_CLUSTERS, NODE_POOLS, operation, new, old, kamaji)


def test_the_live_only_webhook_rows_are_tested_here() -> None:
    live = {n for n in LIVE_ONLY if REFUSALS[n].layer is Layer.WEBHOOK}
    assert live == {"cluster deleted while pools remain", "address range that ends before it starts",
                    "Kubernetes minor the management cluster's Kamaji cannot serve"}


@pytest.mark.parametrize("name", WEBHOOK_CASES)
async def test_the_webhook_refuses_each_cross_object_case_as_validate_does(name: str, mgmt: KubeEmulator) -> None:
    management(mgmt)
    case = CASES[name]
    docs = clone(load_example(case.example))
    case.mutate(docs)
    kind, obj_name = reviewed(name)
    judged_doc = doc(docs, kind, obj_name)
    seed_documents(mgmt, [d for d in docs if d is not judged_doc])
    verdict = await judged(mgmt, "CREATE", judged_doc)
    expected = validate_lines(docs)
    assert any(line.startswith(case.path + ":") and case.fragment in line for line in verdict.refusals), verdict
    assert set(verdict.refusals) <= set(expected), (verdict.refusals, expected)
    unmutated = clone(load_example(case.example))
    seed_documents(mgmt, [d for d in unmutated if d["metadata"]["name"] != obj_name or d["kind"] != kind])
    assert (await judged(mgmt, "CREATE", doc(unmutated, kind, obj_name))).refusals == ()



@pytest.mark.parametrize("name", WEBHOOK_CASES)
async def test_a_shard_judges_another_shards_tenant_from_outlines_as_validate_does(
    name: str, mgmt: KubeEmulator
) -> None:
    """Any replica serves the webhook; a shard holds other shards' TenantClusters and NodePools as
    outlines (spec, no status). Every cross-object refusal reads no more than that."""
    from tenantctl.operator.kube.cache import WatchCache
    from tenantctl.operator.runtime.handlers import HELD_WHOLE, OWNED, inventory_of, tenants_in_full_of

    management(mgmt)
    case = CASES[name]
    docs = clone(load_example(case.example))
    case.mutate(docs)
    kind, obj_name = reviewed(name)
    judged_doc = doc(docs, kind, obj_name)
    for d in docs:
        d["status"] = {"phase": "Ready"}
    seed_documents(mgmt, [d for d in docs if d is not judged_doc])
    tenant = (docs[0]["metadata"]["namespace"], doc(docs, "TenantCluster")["metadata"]["name"])
    elsewhere = next(Shard(i, 2) for i in range(2) if not Shard(i, 2).owns(*tenant))
    cache = WatchCache(owned=OWNED, complete=HELD_WHOLE, scope=inventory_of(elsewhere),
                       in_full=tenants_in_full_of(elsewhere))
    async with KubeClient(Connection.from_server(url(mgmt)), cache=cache) as api:
        verdict = await review(api, TENANT_CLUSTERS, NODE_POOLS, "CREATE", judged_doc, None, DEFAULT_KAMAJI)
        held = [cache.holds(TENANT_CLUSTERS.api_version, p, tenant[0], d["metadata"]["name"])
                for p, d in (("tenantclusters", doc(docs, "TenantCluster")), ("nodepools", doc(docs, "NodePool")))
                if d is not judged_doc]
    assert held and all(h is not None and "status" not in h for h in held), "read from outlines"
    assert any(line.startswith(case.path + ":") and case.fragment in line for line in verdict.refusals), verdict
    assert set(verdict.refusals) <= set(validate_lines(docs)), verdict


async def test_a_reversed_address_range_is_refused_with_validates_text(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = clone(load_example("proxmox.yaml"))
    docs[0]["spec"]["proxmox"]["ipv4Config"]["addresses"] = ["192.0.2.150-192.0.2.100"]
    seed_documents(mgmt, docs[1:])
    verdict = await judged(mgmt, "CREATE", docs[0])
    assert verdict.refusals and set(verdict.refusals) <= set(validate_lines(docs))
    assert verdict.refusals[0].startswith("TenantCluster/acme.spec.proxmox.ipv4Config.addresses[0]: ")


async def test_a_pool_in_a_deprecated_spelling_is_admitted_with_the_deprecation_warning(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = clone(load_example("proxmox.yaml"))
    pool = doc(docs, "NodePool")
    pool["spec"]["proxmox"]["templateTags"] = ["v1.13.6", "talos"]
    seed_documents(mgmt, [d for d in docs if d is not pool])
    verdict = await judged(mgmt, "CREATE", pool)
    assert not verdict.refusals
    (warning,) = verdict.warnings
    assert warning.startswith("NodePool/md0.spec.proxmox.templateTags[0]: ")
    assert TALOS_VERSION_TAG.id in warning and "talos-<spec.talos.version>" in warning


async def test_a_cluster_with_pools_cannot_be_deleted_and_without_them_can(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = load_example("kubevirt.yaml")
    seed_documents(mgmt, docs)
    verdict = await judged(mgmt, "DELETE", None, docs[0])
    assert verdict.refusals == (
        "TenantCluster/demo: NodePools big, md0 still belong to this cluster; delete them first "
        "(a pool without its cluster is left with machines nothing reconciles)",
    )
    assert (await judged(mgmt, "DELETE", None, docs[1])).refusals == ()
    other = clone(docs[:1])
    other[0]["metadata"]["name"] = "empty"
    assert (await judged(mgmt, "DELETE", None, other[0])).refusals == ()


async def test_an_update_that_leaves_spec_alone_passes_even_when_the_spec_is_refused(mgmt: KubeEmulator) -> None:
    """The operator must still remove its finalizer from an object a newer check would refuse."""
    management(mgmt)
    docs = clone(load_example("proxmox.yaml"))
    docs[1]["spec"]["cluster"] = "gone"
    finalized = clone(docs[1:])[0]
    finalized["metadata"]["finalizers"] = []
    assert (await judged(mgmt, "UPDATE", finalized, docs[1])).refusals == ()
    assert (await judged(mgmt, "CREATE", docs[1])).refusals


async def test_a_neighbour_already_wrong_does_not_block_an_unrelated_change(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "NodePool", "big")["spec"]["resources"] = {"cpu": "4"}
    seed_documents(mgmt, docs)
    changed = clone(docs[:1])[0]
    changed["spec"]["controlPlane"] = {"replicas": 3}
    assert (await judged(mgmt, "UPDATE", changed, docs[0])).refusals == ()


# -- served by kopf over HTTP -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def admission_review(operation: str, new: Any, old: Any = None) -> dict[str, Any]:
    body = new if new is not None else old
    plural = "tenantclusters" if body["kind"] == "TenantCluster" else "nodepools"
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": f"uid-{operation}-{body['metadata']['name']}",
            "kind": {"group": "tenantctl.io", "version": "v1alpha1", "kind": body["kind"]},
            "resource": {"group": "tenantctl.io", "version": "v1alpha1", "resource": plural},
            "namespace": body["metadata"]["namespace"],
            "name": body["metadata"]["name"],
            "operation": operation,
            "userInfo": {"username": "alice"},
            "object": new,
            "oldObject": old,
            "dryRun": False,
        },
    }


async def post(port: int, path: str, review_: dict[str, Any]) -> dict[str, Any]:
    async with (
        aiohttp.ClientSession() as session,
        session.post(f"http://127.0.0.1:{port}/{path}", json=review_) as resp,
    ):
        assert resp.status == 200
        answer: dict[str, Any] = await resp.json()
        return answer


async def test_kopf_serves_both_webhooks_over_http(mgmt: KubeEmulator) -> None:
    management(mgmt)
    kubevirt = load_example("kubevirt.yaml")
    seed_documents(mgmt, kubevirt)
    port = free_port()
    settings = dataclasses.replace(FAST, webhook=WebhookSettings(addr="127.0.0.1", port=port))
    async with running_operator(mgmt, settings):

        async def serving() -> bool:
            try:
                await post(port, CLUSTER_WEBHOOK, admission_review("CREATE", kubevirt[0]))
            except aiohttp.ClientConnectionError:
                return False
            return True

        await eventually_async(serving)

        fresh = clone(kubevirt[:1])[0]
        fresh["metadata"]["name"] = "fresh"
        answer = await post(port, CLUSTER_WEBHOOK, admission_review("CREATE", fresh))
        assert answer["response"] == {"uid": "uid-CREATE-fresh", "allowed": True}

        answer = await post(port, CLUSTER_WEBHOOK, admission_review("DELETE", None, kubevirt[0]))
        assert answer["response"]["allowed"] is False
        assert answer["response"]["status"]["code"] == 422
        assert answer["response"]["status"]["message"].startswith("TenantCluster/demo: NodePools big, md0 ")

        pool = clone([doc(kubevirt, "NodePool", "md0")])[0]
        pool["metadata"]["name"] = "extra"
        answer = await post(port, POOL_WEBHOOK, admission_review("CREATE", pool))
        assert answer["response"]["allowed"] is True

        pool["spec"]["cluster"] = "nope"
        answer = await post(port, POOL_WEBHOOK, admission_review("CREATE", pool))
        assert answer["response"]["allowed"] is False
        assert answer["response"]["status"] == {
            "code": 422,
            "message": "NodePool/extra.spec.cluster: no TenantCluster 'nope' in namespace 'tenant-demo' in the input",
        }


async def eventually_async(check: Any, timeout: float = 10.0) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not await check():
        if loop.time() > deadline:
            raise AssertionError("the webhook server did not start")
        await asyncio.sleep(0.1)



async def test_a_skipped_minor_is_refused_with_the_words_of_plan_and_the_crd(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = clone(load_example("kubevirt.yaml"))
    seed_documents(mgmt, docs[1:])
    new = clone(docs[0])
    new["spec"]["version"] = "v1.35"
    verdict = await judged(mgmt, "UPDATE", new, docs[0])
    problems = Problems()
    check_version_change("TenantCluster/demo", "v1.33", "v1.35", "v1.13.6", "v1.13.6", problems)
    assert verdict.refusals == tuple(f"{p.path}: {p.message}" for p in problems)
    assert verdict.refusals == ("TenantCluster/demo.spec.version: v1.33 → v1.35 skips a minor: Kamaji and the "
                                "Kubernetes skew policy upgrade one minor at a time",)
    new["spec"]["version"] = "v1.34"
    assert (await judged(mgmt, "UPDATE", new, docs[0])).refusals == ()


async def test_a_minor_the_kamaji_cannot_serve_is_refused_and_one_it_serves_passes(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = clone(load_example("kubevirt.yaml"))
    docs[0]["spec"]["version"] = "v1.36"
    seed_documents(mgmt, docs[1:])
    refused = await judged(mgmt, "CREATE", docs[0])
    assert len(refused.refusals) == 1
    assert refused.refusals[0].startswith("TenantCluster/demo.spec.version: Kubernetes v1.36 needs Kamaji 26.5.3-edge")
    newer = KamajiRelease("26.6.5-edge", "the operator's --kamaji-version")
    assert (await judged(mgmt, "CREATE", docs[0], kamaji=newer)).refusals == ()
    unchanged = clone(docs[0])
    unchanged["spec"]["controlPlane"] = {"replicas": 3}
    assert (await judged(mgmt, "UPDATE", unchanged, docs[0])).refusals == (), "a version left alone is not judged"


async def test_a_replace_restore_is_refused_while_its_source_exists(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = load_example("kubevirt.yaml")
    seed_documents(mgmt, docs)
    restored = clone(docs[:1])[0]
    restored["metadata"]["name"] = "again"
    restored["spec"]["backup"] = {
        "s3": {"endpoint": "https://s3.example.com", "bucket": "tenant-backups", "credentialsSecretName": "s3"},
        "encryption": {"keySecretName": "key"},
    }
    restored["spec"]["restore"] = {"from": {"name": "demo"}, "mode": "replace"}
    (refusal,) = (await judged(mgmt, "CREATE", restored)).refusals
    assert refusal.startswith("TenantCluster/again.spec.restore.mode: replace is refused while TenantCluster "
                              "tenant-demo/demo exists")
    restored["spec"]["restore"]["mode"] = "clone"
    assert (await judged(mgmt, "CREATE", restored)).refusals == ()
    restored["spec"]["restore"] = {"from": {"name": "gone"}, "mode": "replace"}
    assert (await judged(mgmt, "CREATE", restored)).refusals == ()


async def test_a_restore_from_another_namespace_is_refused_without_the_platforms_leave(mgmt: KubeEmulator) -> None:
    management(mgmt)
    docs = load_example("kubevirt.yaml")
    restored = clone(docs[:1])[0]
    restored["metadata"]["name"] = "again"
    restored["spec"]["backup"] = {
        "s3": {"endpoint": "https://s3.example.com", "bucket": "tenant-backups", "credentialsSecretName": "s3"},
        "encryption": {"keySecretName": "key"},
    }
    restored["spec"]["restore"] = {"from": {"name": "demo", "namespace": "team-a"}, "mode": "clone"}
    (refusal,) = (await judged(mgmt, "CREATE", restored)).refusals
    assert refusal.startswith("TenantCluster/again.spec.restore.from.namespace: 'team-a' is another namespace")
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        allowed = await review(api, TENANT_CLUSTERS, NODE_POOLS, "CREATE", restored, None,
                               restore_across_namespaces=True)
    assert allowed.refusals == ()
    restored["spec"]["restore"]["from"] = {"name": "demo", "namespace": "tenant-demo"}
    assert (await judged(mgmt, "CREATE", restored)).refusals == (), "its own namespace, named"
