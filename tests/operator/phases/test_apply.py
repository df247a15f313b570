"""Create, idle resync, spec change, refusal and the endpoint — the real kopf engine on emulated APIs."""

from __future__ import annotations

import asyncio
import base64
import re
from dataclasses import replace
from typing import Any

import pytest
from kube_emulator import IMMUTABLE_TCT, Fault, KubeEmulator
from operator_support import (
    FAST,
    condition,
    eventually,
    management,
    one_more_pass,
    quiet,
    running_operator,
    seed_control_plane,
    seed_documents,
    watched,
)

from tenant_support import doc, load_example
from tenantctl.operator.kube.client import Connection, KubeClient, Resource
from tenantctl.operator.phases.apply import _versions_digest, comparable
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.runtime.handlers import LIST_PAGE_SIZE, TENANT_CLUSTERS, OperatorContext, run_pass

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
NP = "tenantctl.io/v1alpha1/nodepools"
NODE_POOLS = Resource("tenantctl.io/v1alpha1", "NodePool", "nodepools", True)
SERVICES = Resource("v1", "Service", "services", True)
PROXMOX = ("tenant-acme", "acme")
KCP = "controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes"
KUBEVIRT = ("tenant-demo", "demo")


def url(emulator: KubeEmulator) -> str:
    return str(emulator.url).rstrip("/")


def ready(mgmt: KubeEmulator, key: tuple[str, str] = PROXMOX) -> bool:
    return condition(mgmt.get(TC, *key), "Ready").get("status") == "True"


def applied(emulator: KubeEmulator, since: int = 0) -> list[tuple[str, str, str]]:
    return [(e.verb, e.plural, e.name) for e in emulator.writes()[since:] if e.plural != "events"]


def events(emulator: KubeEmulator) -> list[dict[str, Any]]:
    return emulator.live("events")


def seeded(mgmt: KubeEmulator, tenant: KubeEmulator | None, example: str = "proxmox.yaml") -> list[dict[str, Any]]:
    docs = load_example(example)
    management(mgmt)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, url(tenant) if tenant is not None else None)
    return docs


async def test_create_applies_every_rendered_object_and_reports_ready(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt))
    kinds = {plural for verb, plural, name in applied(mgmt) if verb == "apply-create" and name != "tenantctl-operator"}
    assert kinds >= {
        "issuers", "certificates", "clusters", "kamajicontrolplanes", "proxmoxclusters",
        "talosconfigtemplates", "proxmoxmachinetemplates", "machinedeployments", "machinehealthchecks",
    }
    tc = mgmt.get(TC, *PROXMOX)
    assert tc is not None
    status = tc["status"]
    shared = {"helmrepositories", "ocirepositories"}
    assert kinds & shared, "the Platform's chart sources the tenant's add-ons use"
    assert len(kinds - shared) == len(status["inventory"]), "shared chart sources are in no tenant's inventory"
    assert status["phase"] == "Ready"
    assert status["observedGeneration"] == 1
    assert condition(tc, "Ready")["message"] == "all objects applied, tenant bootstrapped"
    pool = mgmt.get(NP, "tenant-acme", "md0")
    assert pool is not None
    (pool_ready,) = [c for c in pool["status"]["conditions"] if c["type"] == "Ready"]
    assert pool_ready["observedGeneration"] == pool["metadata"]["generation"] == pool["status"]["observedGeneration"]
    assert status["endpoint"] == "192.0.2.10"
    assert {c["type"] for c in status["conditions"]} == {
        "Ready", "Applied", "CredentialsReady", "EndpointReady", "TenantBootstrapped", "TalosAPI", "Upgrading",
        "Deprecated"}
    assert condition(tc, "Deprecated")["status"] == "False"
    assert "tenantctl.io/teardown" in tc["metadata"]["finalizers"]
    pool = mgmt.get(NP, "tenant-acme", "md0")
    assert condition(pool, "Ready")["status"] == "True"
    kcp = mgmt.get("controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", *PROXMOX)
    assert kcp is not None and "192.0.2.10" in kcp["spec"]["network"]["certSANs"]
    inside = {(plural, name) for verb, plural, name in applied(tenant) if verb == "apply-create"}
    assert ("clusterrolebindings", "tenantctl:talos-node-bootstrapper") in inside
    assert any(p == "secrets" and n.startswith("bootstrap-token-") for p, n in inside)


async def test_talos_secrets_are_generated_once_in_their_formats_and_never_overwritten(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        first = mgmt.get("v1/secrets", "tenant-acme", "acme-talos-secrets")
        await one_more_pass(ctx, PROXMOX)
    assert first is not None and mgmt.get("v1/secrets", "tenant-acme", "acme-talos-secrets") == first
    values = {k: base64.b64decode(v).decode() for k, v in first["data"].items()}
    assert re.fullmatch(r"[a-z0-9]{6}\.[a-z0-9]{16}", values["token"])
    assert re.fullmatch(r"[a-z0-9]{6}", values["bootstrapTokenID"])
    assert re.fullmatch(r"[a-z0-9]{16}", values["bootstrapTokenSecret"])
    assert len(base64.b64decode(values["clusterID"])) == 32
    assert len(base64.b64decode(values["clusterSecret"])) == 32
    assert [(v, n) for v, p, n in applied(mgmt) if p == "secrets"] == [("create", "acme-talos-secrets")]


async def test_tenant_clusters_and_pools_are_listed_a_page_at_a_time(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """kopf's lists and the cache's alike: one answer holding every tenant is one allocation of every shard's."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt))
    for plural in ("tenantclusters", "nodepools"):
        limits = {limit for (what, limit), _ in mgmt.list_limits.items() if what == plural}
        assert limits == {str(LIST_PAGE_SIZE)}, (plural, mgmt.list_limits)
    lists = sum(n for (what, _), n in mgmt.list_limits.items() if what == "tenantclusters")
    assert lists >= 2, "kopf's and the cache's"


async def test_a_second_pass_writes_nothing(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        mgmt_writes, tenant_writes = len(mgmt.write_requests), len(tenant.write_requests)
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
        assert mgmt.write_requests[mgmt_writes:] == [], "not even a no-op apply"
        assert tenant.write_requests[tenant_writes:] == []


MACHINE_DEPLOYMENTS = Resource("cluster.x-k8s.io/v1beta1", "MachineDeployment", "machinedeployments", True)
HEALTH_CHECKS = Resource("cluster.x-k8s.io/v1beta1", "MachineHealthCheck", "machinehealthchecks", True)


def held(ctx: OperatorContext, res: Resource, name: str) -> dict[str, Any] | None:
    assert ctx.api.cache is not None
    return ctx.api.cache.holds(res.api_version, res.plural, "tenant-acme", name)


async def test_a_pass_that_found_everything_in_place_is_trusted_until_something_changes(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """A pass that wrote nothing leaves its word; the next, with the same inputs and inventory versions,
    renders and compares nothing (the same word stands), and writes nothing."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        word = ctx.verified[PROXMOX]
        assert set(word.kinds) == set(mgmt.get(TC, *PROXMOX)["status"]["inventory"])
        since = len(mgmt.write_requests)
        await one_more_pass(ctx, PROXMOX)
        assert ctx.verified[PROXMOX] is word, "the same word: nothing was rendered or compared"
        assert mgmt.write_requests[since:] == []


@pytest.mark.parametrize("change", ["edited", "deleted"])
async def test_a_trusted_tenant_whose_object_was_changed_by_someone_is_repaired(
    mgmt: KubeEmulator, tenant: KubeEmulator, change: str
) -> None:
    """Any write to the inventory changes its versions, so the next pass renders and compares again."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        word = ctx.verified[PROXMOX]
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            if change == "edited":
                await api.merge_patch(MACHINE_DEPLOYMENTS, "acme-md0", "tenant-acme", {"spec": {"replicas": 9}})
                await eventually(lambda: (held(ctx, MACHINE_DEPLOYMENTS, "acme-md0") or {})["spec"]["replicas"] == 9)
            else:
                await api.delete(HEALTH_CHECKS, "acme-md0", "tenant-acme")
                await eventually(lambda: held(ctx, HEALTH_CHECKS, "acme-md0") is None)
        since = len(mgmt.write_requests)
        await one_more_pass(ctx, PROXMOX)
        assert ctx.verified.get(PROXMOX) is not word
        sent = [(p, n) for _, p, _, n in mgmt.write_requests[since:] if p not in ("events", "tenantclusters")]
        assert sent == [("machinedeployments" if change == "edited" else "machinehealthchecks", "acme-md0")]
        md = mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", "tenant-acme", "acme-md0")
        assert md is not None and md["spec"]["replicas"] == 2
        assert mgmt.get("cluster.x-k8s.io/v1beta1/machinehealthchecks", "tenant-acme", "acme-md0") is not None
        await one_more_pass(ctx, PROXMOX)
        assert ctx.verified.get(PROXMOX) is not None, "the repairing pass wrote; the one after finds it in place"


async def test_a_deleted_tenant_leaves_no_word_behind(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """The operator's memory of verified passes ends with the tenant (it would grow with every tenant ever seen)."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        assert PROXMOX in ctx.verified
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            await api.delete(TENANT_CLUSTERS, "acme", "tenant-acme")
        await eventually(lambda: mgmt.get(TC, *PROXMOX) is None, timeout=10)
        assert PROXMOX not in ctx.verified


async def test_a_spec_change_applies_only_the_changed_objects(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        since = len(mgmt.write_requests)
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            await api.merge_patch(NODE_POOLS, "md0", "tenant-acme", {"spec": {"replicas": 5}})
        pool = lambda: mgmt.get(NP, "tenant-acme", "md0") or {}  # noqa: E731
        await eventually(lambda: pool().get("status", {}).get("observedGeneration") == 2)
    ours = ("events", "nodepools", "tenantclusters")
    sent = [(m, p, n) for m, p, _, n in mgmt.write_requests[since:] if p not in ours]
    assert sent == [("PATCH", "machinedeployments", "acme-md0")], "one apply, of the changed object only"
    md = mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", "tenant-acme", "acme-md0")
    assert md is not None and md["spec"]["replicas"] == 5


async def test_a_refused_spec_is_a_condition_and_an_event_never_a_crash_loop(mgmt: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"]["dnsServer"] = ["192.0.2.53"]
    management(mgmt)
    seed_documents(mgmt, docs)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("reason") == "InvalidSpec")
        since = await quiet(ctx, mgmt, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
        assert mgmt.writes()[since:] == []
    tc = mgmt.get(TC, *PROXMOX)
    assert tc is not None and tc["status"]["phase"] == "Invalid"
    ready_cond = condition(tc, "Ready")
    assert ready_cond["status"] == "False" and "spec.proxmox.dnsServer" in ready_cond["message"]
    assert ready_cond["observedGeneration"] == tc["metadata"]["generation"], "the verdict is on this generation"
    warnings = [e for e in events(mgmt) if e.get("reason") == "InvalidSpec"]
    assert len(warnings) == 1 and warnings[0]["type"] == "Warning"
    assert "spec.proxmox.dnsServer" in warnings[0]["message"]
    assert not [w for w in applied(mgmt) if w[0].startswith("apply")]


async def test_a_refused_spec_keeps_what_the_last_complete_pass_learnt(mgmt: KubeEmulator) -> None:
    """An edit refused mid-upgrade must not erase the upgrade in progress, what runs where, the kinds to
    prune or the address: the next valid edit resumes from them."""
    docs = load_example("proxmox.yaml")
    doc(docs, "TenantCluster")["spec"]["proxmox"]["dnsServer"] = ["192.0.2.53"]
    management(mgmt)
    seed_documents(mgmt, docs)
    learnt = {
        "inventory": ["v1/Secret"],
        "endpoint": "192.0.2.10",
        "versions": {"controlPlane": "v1.35.2", "pools": {"md0": {"kubernetes": "v1.34.4"}}},
        "upgrade": {"target": {"kubernetes": "v1.35.2"}, "stage": "Pool", "pool": "md0", "waiting": "md0"},
    }
    tc = mgmt.get(TC, *PROXMOX)
    assert tc is not None
    tc["status"] = dict(learnt)
    mgmt.put(TC, tc)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("reason") == "InvalidSpec")
    status = (mgmt.get(TC, *PROXMOX) or {})["status"]
    assert {key: status.get(key) for key in learnt} == learnt


async def test_proxmox_endpoint_comes_from_the_load_balancer_ingress(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    svc = mgmt.get("v1/services", *PROXMOX)
    assert svc is not None
    svc["status"] = {"loadBalancer": {"ingress": [{"hostname": "acme.lb.example"}]}}
    mgmt.put("v1/services", svc)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt))
    tc = mgmt.get(TC, *PROXMOX)
    assert tc is not None and tc["status"]["endpoint"] == "acme.lb.example"
    tct = mgmt.get("bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates", "tenant-acme", "acme-md0")
    assert tct is not None and "https://acme.lb.example:6443" in str(tct["spec"])
    assert "10.96.7.7" not in str(tct["spec"])  # never the ClusterIP a Proxmox VM cannot route to


async def test_kubevirt_endpoint_is_the_cluster_ip(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant, "kubevirt.yaml")
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT))
    tc = mgmt.get(TC, *KUBEVIRT)
    assert tc is not None and tc["status"]["endpoint"] == "192.0.2.10"
    tct = mgmt.get("bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates", "tenant-demo", "demo-md0")
    assert tct is not None and "192.0.2.10" in str(tct["spec"]) and "10.96.0.10" in str(tct["spec"])


async def test_without_an_address_no_template_is_written_and_the_cluster_waits(mgmt: KubeEmulator) -> None:
    seeded(mgmt, None)
    svc = mgmt.get("v1/services", *PROXMOX)
    assert svc is not None
    svc["status"] = {"loadBalancer": {}}
    mgmt.put("v1/services", svc)
    async with running_operator(mgmt):
        endpoint = lambda: condition(mgmt.get(TC, *PROXMOX), "EndpointReady")  # noqa: E731
        await eventually(lambda: endpoint().get("reason") == "WaitingForEndpoint")
    assert not [w for w in applied(mgmt) if w[1] == "talosconfigtemplates"]
    assert (mgmt.get(TC, *PROXMOX) or {})["status"]["phase"] == "Provisioning"


async def test_losing_the_endpoint_keeps_the_cluster_identity_and_the_templates(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """While the address is gone the render lacks what needs it; prune must not take the identity with it."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        identity = mgmt.get("v1/secrets", "tenant-acme", "acme-talos-secrets")
        templates = sorted(o["metadata"]["name"] for o in mgmt.live("talosconfigtemplates"))
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            lost = {"status": {"loadBalancer": {"ingress": None}}}
            await api.merge_patch(SERVICES, "acme", "tenant-acme", lost, status=True)
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
        assert condition(mgmt.get(TC, *PROXMOX), "EndpointReady").get("reason") == "WaitingForEndpoint"
    assert identity is not None and templates
    assert mgmt.get("v1/secrets", "tenant-acme", "acme-talos-secrets") == identity
    assert sorted(o["metadata"]["name"] for o in mgmt.live("talosconfigtemplates")) == templates


async def test_a_converged_tenant_costs_its_apiserver_one_probe_per_pass(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """The operator keeps each tenant's client open and remembers a verified bootstrap between passes."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        before = tenant.reads
        await one_more_pass(ctx, PROXMOX)
        assert tenant.reads - before == 1


async def test_a_new_tenant_is_bootstrapped_without_reading_what_cannot_exist_yet(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """First contact applies the bootstrap objects blind (server-side apply is idempotent); once the
    recheck interval has passed, they are read and compared, and an unchanged tenant is not written."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt, replace(FAST, tenant_recheck_interval=60.0)) as ctx:
        await eventually(lambda: ready(mgmt))
        bootstrap_kinds = ("secrets", "clusterrolebindings", "roles", "rolebindings")
        assert not [what for (verb, what) in tenant.tally if verb == "FETCH" and what in bootstrap_kinds]
        assert not [what for (verb, what) in tenant.tally if what.startswith(("/api/", "/apis/"))], "no discovery"
        assert {p for _, p, _ in applied(tenant)} >= set(bootstrap_kinds)
        await quiet(ctx, mgmt, PROXMOX)
        writes = len(tenant.writes())
        await asyncio.sleep(61)  # the loop's clock (looptime): past the recheck interval
        await one_more_pass(ctx, PROXMOX)
        fetched = sum(n for (verb, what), n in tenant.tally.items() if verb == "FETCH" and what in bootstrap_kinds)
        assert fetched == 6
        assert len(tenant.writes()) == writes


async def test_an_unusable_admin_kubeconfig_is_a_condition_until_kamaji_writes_a_good_one(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """The Secret is Kamaji's, not ours: a garbled one waits with the reason, and its rewrite wakes the pass."""
    seeded(mgmt, tenant)
    secret = mgmt.get("v1/secrets", "tenant-acme", "acme-admin-kubeconfig")
    assert secret is not None
    good = secret["data"]["super-admin.svc"]
    secret["data"]["super-admin.svc"] = base64.b64encode(b"clusters: []\n").decode()
    mgmt.put("v1/secrets", secret)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "TenantBootstrapped").get("status") == "False")
        booted = condition(mgmt.get(TC, *PROXMOX), "TenantBootstrapped")
        assert booted["message"] == (
            "admin kubeconfig Secret acme-admin-kubeconfig is not a kubeconfig: it needs clusters[], each with "
            "cluster.server"
        )
        assert not ready(mgmt)
        secret = mgmt.get("v1/secrets", "tenant-acme", "acme-admin-kubeconfig")
        assert secret is not None
        secret["data"]["super-admin.svc"] = good
        mgmt.put("v1/secrets", secret)
        await eventually(lambda: ready(mgmt))


async def test_a_changed_endpoint_replaces_the_immutable_template(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    """On a converged tenant whose last pass found everything in place: the endpoint is a render input."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        assert PROXMOX in ctx.verified
        since = len(mgmt.writes())
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            patch = {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.99"}]}}}
            await api.merge_patch(SERVICES, "acme", "tenant-acme", patch, status=True)
        await one_more_pass(ctx, PROXMOX)
        await eventually(lambda: (mgmt.get(TC, *PROXMOX) or {})["status"].get("endpoint") == "192.0.2.99")
        await eventually(lambda: len([e for e in events(mgmt) if e.get("reason") == "TemplateReplaced"]) == 2)
    tct_writes = [(v, n) for v, p, n in applied(mgmt, since) if p == "talosconfigtemplates"]
    assert tct_writes == [("delete", "acme-md0"), ("apply-create", "acme-md0")]
    tct = mgmt.get("bootstrap.cluster.x-k8s.io/v1alpha3/talosconfigtemplates", "tenant-acme", "acme-md0")
    assert tct is not None and "192.0.2.99" in str(tct["spec"])
    kcp = mgmt.get("controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", *PROXMOX)
    assert kcp is not None and "192.0.2.99" in kcp["spec"]["network"]["certSANs"]
    replaced = [e["message"] for e in events(mgmt) if e.get("reason") == "TemplateReplaced"]
    assert len(replaced) == 2
    assert IMMUTABLE_TCT in replaced[0] and "deleting" in replaced[0] and "created again" in replaced[1]


async def test_an_inventory_listing_secrets_never_prunes_the_talos_identity(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """No render has a Secret today, but an inventory may list the kind (an older release's, a render of
    another version): pruning then lists the tenant's Secrets, and the generated identity must survive it."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        identity = mgmt.get("v1/secrets", "tenant-acme", "acme-talos-secrets")
        assert identity is not None and identity["metadata"]["labels"].get("tenantctl.io/cluster") == "acme"
        current = mgmt.get(TC, *PROXMOX)
        assert current is not None
        current["status"]["inventory"] = sorted({*current["status"]["inventory"], "v1/Secret"})
        mgmt.put(TC, current)
        await one_more_pass(ctx, PROXMOX)
        await one_more_pass(ctx, PROXMOX)
    assert mgmt.get("v1/secrets", "tenant-acme", "acme-talos-secrets") == identity
    assert not [e for e in mgmt.writes() if e.plural == "secrets" and e.verb == "delete"]


async def test_kinds_the_cluster_does_not_serve_are_named_together_and_nothing_is_applied(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """Without capmox installed, the pass names every kind it lacks (sorted), applies nothing, and retries."""
    seeded(mgmt, tenant)
    for res in [r for r, info in mgmt.resources.items() if info.kind in ("ProxmoxCluster", "ProxmoxMachineTemplate")]:
        del mgmt.resources[res]
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Applied").get("reason") == "MissingAPI")
        tc = mgmt.get(TC, *PROXMOX)
    applied_cond = condition(tc, "Applied")
    assert applied_cond["message"] == (
        "the management cluster does not serve infrastructure.cluster.x-k8s.io/v1alpha1/ProxmoxCluster, "
        "infrastructure.cluster.x-k8s.io/v1alpha1/ProxmoxMachineTemplate; install their providers")
    ready_cond = condition(tc, "Ready")
    assert (ready_cond["status"], ready_cond["reason"], ready_cond["message"]) == (
        "False", "MissingAPI", applied_cond["message"]), "Ready says why, as Applied does"
    assert [e for e in mgmt.writes() if e.plural in ("clusters", "machinedeployments")] == []


async def test_each_pool_reports_its_clusters_ready_condition_word_for_word(mgmt: KubeEmulator) -> None:
    """A pool is as ready as the tenant it belongs to: a NodePool's Ready copies the cluster's reason and
    message, also while the cluster waits (here for a tenant apiserver that never answers)."""
    seeded(mgmt, None)
    async with running_operator(mgmt):
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Ready").get("status") == "False"
                         and condition(mgmt.get(NP, "tenant-acme", "md0"), "Ready").get("status") == "False")
        cluster_ready = condition(mgmt.get(TC, *PROXMOX), "Ready")
        pool_ready = condition(mgmt.get(NP, "tenant-acme", "md0"), "Ready")
    assert cluster_ready["reason"] != "Reconciled"
    assert (pool_ready["reason"], pool_ready["message"]) == (cluster_ready["reason"], cluster_ready["message"])


async def test_a_removed_pool_is_pruned(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant, "kubevirt.yaml")
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt, KUBEVIRT))
        since = len(mgmt.writes())
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            await api.delete(NODE_POOLS, "big", "tenant-demo")
        await eventually(lambda: mgmt.get(NP, "tenant-demo", "big") is None)
    deleted = sorted((p, n) for v, p, n in applied(mgmt, since) if v == "delete" and p != "nodepools")
    assert deleted == [
        ("kubevirtmachinetemplates", deleted[0][1]),
        ("machinedeployments", "demo-big"),
        ("machinehealthchecks", "demo-big"),
        ("talosconfigtemplates", "demo-big"),
    ]
    assert deleted[0][1].startswith("demo-big-")
    assert mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", "tenant-demo", "demo-md0") is not None
    said = {e.get("message") for e in events(mgmt)}
    assert {"pruned MachineDeployment/demo-big: no longer rendered",
            "pruned TalosConfigTemplate/demo-big: no longer rendered"} <= said, said


async def test_the_last_pool_removed_prunes_kinds_no_longer_rendered_at_all(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    """With no pool left, no MachineDeployment is rendered at all: the kinds come from the last pass's
    inventory, or their objects would never be listed, let alone pruned."""
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        await quiet(ctx, mgmt, PROXMOX)
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            await api.delete(NODE_POOLS, "md0", "tenant-acme")
        await eventually(lambda: mgmt.get(NP, "tenant-acme", "md0") is None)
        await one_more_pass(ctx, PROXMOX)
        await eventually(lambda: mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", "tenant-acme", "acme-md0")
                         is None)
        assert mgmt.get("cluster.x-k8s.io/v1beta1/machinehealthchecks", "tenant-acme", "acme-md0") is None


@pytest.mark.parametrize("status", [409, 500])
async def test_injected_conflicts_and_server_errors_converge(
    mgmt: KubeEmulator, tenant: KubeEmulator, status: int
) -> None:
    seeded(mgmt, tenant)
    mgmt.fail(Fault("PATCH", "kamajicontrolplanes", status=status, times=12))
    mgmt.fail(Fault("GET", "services", status=status, times=2))
    tenant.fail(Fault("PATCH", "clusterrolebindings", status=status, times=6))
    async with running_operator(mgmt):
        # Three failed passes for the control plane, one for the tenant: requeues of 2, 4, 8, 16 s of fake time.
        await eventually(lambda: ready(mgmt), timeout=45)
    assert all(f.times == 0 for f in mgmt.faults + tenant.faults)
    assert mgmt.get("controlplane.cluster.x-k8s.io/v1alpha1/kamajicontrolplanes", *PROXMOX) is not None


async def test_a_silent_api_times_out_and_converges(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    mgmt.fail(Fault("PATCH", "machinedeployments", hang=6.0, times=1))
    tenant.fail(Fault("GET", None, hang=2.0, times=1))
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt), timeout=12)
    assert mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", "tenant-acme", "acme-md0") is not None



async def test_the_stop_ends_a_pass_in_flight_before_it_closes_the_client(
    mgmt: KubeEmulator, tenant: KubeEmulator, caplog: pytest.LogCaptureFixture
) -> None:
    """kopf runs its cleanup (our `stop`, which closes the client) while daemons are still in their grace
    period: a pass in flight went on to its next request on the closed client and logged a traceback
    ("KubeClient used outside `async with`"). The stop now cancels passes first, and none starts after."""
    seeded(mgmt, tenant)
    hanging = Fault("PATCH", "machinedeployments", hang=2.0, times=1)
    mgmt.fail(hanging)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: hanging.times == 0, timeout=10)
        caplog.clear()
        clock = asyncio.get_running_loop().time
        began = clock()
        await ctx.stop()  # what kopf's cleanup does, here with the reconciler's daemon still running
        assert clock() - began < 0.5, "the pass in flight was cancelled, not waited out"
        await asyncio.sleep(hanging.hang + 1)  # the hung apply answers; a pass left running goes on
        failed = [r.getMessage() for r in caplog.records if "pass failed" in r.getMessage() or r.exc_info]
        assert failed == []
        assert await run_pass(ctx, *PROXMOX) is Next.RESYNC, "no pass starts once the operator stops"


async def test_a_pool_of_a_missing_cluster_says_so_in_its_status(mgmt: KubeEmulator) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    seed_documents(mgmt, [doc(docs, "NodePool")])
    pool_ready = lambda: condition(mgmt.get(NP, "tenant-acme", "md0"), "Ready")  # noqa: E731
    async with running_operator(mgmt):
        await eventually(lambda: pool_ready().get("reason") == "ClusterNotFound")
    assert "TenantCluster tenant-acme/acme does not exist" in pool_ready()["message"]
    assert not [w for w in applied(mgmt) if w[0].startswith("apply")]


async def test_a_replacement_the_operator_may_not_delete_says_how_to_grant_it(
    mgmt: KubeEmulator, tenant: KubeEmulator
) -> None:
    seeded(mgmt, tenant)
    async with running_operator(mgmt):
        await eventually(lambda: ready(mgmt))
        mgmt.fail(Fault("DELETE", "talosconfigtemplates", status=403, times=100, message="forbidden"))
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            patch = {"status": {"loadBalancer": {"ingress": [{"ip": "192.0.2.99"}]}}}
            await api.merge_patch(SERVICES, "acme", "tenant-acme", patch, status=True)
        applied_cond = lambda: condition(mgmt.get(TC, *PROXMOX), "Applied")  # noqa: E731
        await eventually(lambda: applied_cond().get("status") == "False", timeout=120)
    assert applied_cond()["reason"] == "APIError"
    assert "TalosConfigTemplate/acme-md0 must be replaced" in applied_cond()["message"]
    assert "tenantctl install -f" in applied_cond()["message"]


async def test_a_failed_pass_keeps_the_inventory_and_the_endpoint(mgmt: KubeEmulator, tenant: KubeEmulator) -> None:
    seeded(mgmt, tenant)
    async with running_operator(mgmt) as ctx:
        await eventually(lambda: ready(mgmt))
        before = (mgmt.get(TC, *PROXMOX) or {})["status"]
        # Reads come from watches: make the pass write (a drifted KamajiControlPlane) and the write fail.
        async with KubeClient(Connection.from_server(url(mgmt))) as api:
            kcps = await api.require("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
            await api.merge_patch(kcps, "acme", "tenant-acme", {"spec": {"replicas": 7}})
        mgmt.fail(Fault("PATCH", "kamajicontrolplanes", status=500, times=1000))
        await watched(ctx, KCP, *PROXMOX, lambda held: held["spec"]["replicas"] == 7)
        await one_more_pass(ctx, PROXMOX)
        await eventually(lambda: condition(mgmt.get(TC, *PROXMOX), "Applied").get("reason") == "APIError")
        mgmt.faults.clear()
    after = (mgmt.get(TC, *PROXMOX) or {})["status"]
    assert after["inventory"] == before["inventory"] and after["endpoint"] == before["endpoint"]


def test_a_secret_is_compared_by_its_data_and_string_data_together() -> None:
    """A real server folds `stringData` into `data`; a desired Secret with both must keep both to compare."""
    desired = {"kind": "Secret", "data": {"kept": base64.b64encode(b"as data").decode()},
               "stringData": {"folded": "as string data"}}
    assert comparable(desired) == {
        "kind": "Secret",
        "data": {"kept": base64.b64encode(b"as data").decode(),
                 "folded": base64.b64encode(b"as string data").decode()},
    }


def test_the_inventory_digest_is_of_the_set_and_unknown_with_an_unversioned_object() -> None:
    one = [("v1/Secret", "a", "1"), ("apps/v1/Deployment", "a", "7")]
    assert _versions_digest(one) == _versions_digest(reversed(one)) != _versions_digest([one[0]])
    assert _versions_digest(one) != _versions_digest([one[0], ("apps/v1/Deployment", "a", "8")])
    assert _versions_digest([*one, ("v1/Secret", "b", None)]) is None, "no version: no way to tell a change"
