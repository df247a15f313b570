"""The operator and its webhook judge what Cluster API will build from a render, before anything is applied
(issue 67).

The API server admits a template by the template's CRD; the clone is judged later, by another CRD. The
operator reads the derived kinds' CRDs the management cluster serves (here capmox v0.7.7's own
ProxmoxMachine CRD, and one a later capmox might serve with a rule more) and refuses the pass, naming
the template's field, when a clone would be refused: nothing is applied.
"""

from __future__ import annotations

import asyncio
import copy
import functools
from pathlib import Path
from typing import Any

import pytest
import yaml
from kube_emulator import KubeEmulator, declare
from operator_support import condition, eventually, management, running_operator, seed_control_plane, seed_documents

from tenant_support import load_example
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.operator.phases.derived import DERIVED_CRDS, DerivedJudge
from tenantctl.operator.runtime.admission import review
from tenantctl.operator.runtime.handlers import NODE_POOLS, TENANT_CLUSTERS
from tenantctl.spec.compat import DEFAULT_KAMAJI

pytestmark = [pytest.mark.timeout(15), pytest.mark.looptime]

TC = "tenantctl.io/v1alpha1/tenantclusters"
PROXMOX = ("tenant-acme", "acme")
CRDS = "apiextensions.k8s.io/v1/customresourcedefinitions"
PMT = "infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxmachinetemplates"
STRICTER = {"rule": "!has(self.pool)", "message": "resource pools are not supported by this capmox"}


@functools.cache
def _capmox_machine_crd(shared: Path) -> dict[str, Any]:
    path = shared / "crds" / "capmox-v0.7.7" / "infrastructure.cluster.x-k8s.io_proxmoxmachines.yaml"
    return dict(yaml.load(path.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)))


def _serve(mgmt: KubeEmulator, shared: Path, *, stricter: bool = False, rule: dict[str, str] | None = None) -> None:
    """capmox v0.7.7's ProxmoxMachine CRD, with one rule more: `STRICTER` (as a later capmox might serve),
    or `rule`."""
    crd = copy.deepcopy(_capmox_machine_crd(shared))
    extra = rule or (STRICTER if stricter else None)
    if extra is not None:
        for version in crd["spec"]["versions"]:
            version["schema"]["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"].append(extra)
    declare(mgmt, [("infrastructure.cluster.x-k8s.io/v1alpha1/proxmoxmachines", "ProxmoxMachine", True, ())])
    mgmt.put(CRDS, crd)


def _seeded(mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path, *, stricter: bool) -> None:
    docs = load_example("proxmox.yaml")
    management(mgmt)
    _serve(mgmt, shared, stricter=stricter)
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))


def _ready(mgmt: KubeEmulator) -> dict[str, Any]:
    return dict(condition(mgmt.get(TC, *PROXMOX), "Ready"))


async def test_a_render_whose_clones_capmox_admits_is_applied(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path
) -> None:
    _seeded(mgmt, tenant, shared, stricter=False)
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt).get("status") == "True")
    assert mgmt.live(PMT.rsplit("/", 1)[-1]) != []


async def test_a_render_whose_clone_would_be_refused_applies_nothing_and_names_the_template(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path
) -> None:
    _seeded(mgmt, tenant, shared, stricter=True)
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt).get("reason") == "InvalidSpec")
    message = _ready(mgmt)["message"]
    assert ".spec.template.spec: the ProxmoxMachine Cluster API clones from it is refused" in message, message
    assert message.startswith("ProxmoxMachineTemplate/acme-md0-") and STRICTER["message"] in message
    assert [w for w in mgmt.writes() if w.plural not in ("events", "tenantclusters", "nodepools", "secrets")] == []


async def test_the_crds_are_read_once_per_interval_and_again_after_a_provider_upgrade(
    mgmt: KubeEmulator, shared: Path
) -> None:
    management(mgmt)
    _serve(mgmt, shared, stricter=False)
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        judge = DerivedJudge(ttl=60.0)
        first = await judge.catalog(api)
        assert first is not None and first.lookup("infrastructure.cluster.x-k8s.io/v1alpha1", "ProxmoxMachine")
        _serve(mgmt, shared, stricter=True)  # a capmox upgrade: the CRD's resourceVersion moves
        assert await judge.catalog(api) is first, "within the interval: the same catalog, nothing read"
        await asyncio.sleep(61.0)
        second = await judge.catalog(api)
        assert second is not None and second is not first
        version = second.lookup("infrastructure.cluster.x-k8s.io/v1alpha1", "ProxmoxMachine")
        assert version is not None and STRICTER in version.schema["properties"]["spec"]["x-kubernetes-validations"]
        await asyncio.sleep(61.0)
        assert await judge.catalog(api) is second, "read again, unchanged: not built again"
    assert len(DERIVED_CRDS) == 4 and "proxmoxmachines.infrastructure.cluster.x-k8s.io" in DERIVED_CRDS


async def _reviewed(mgmt: KubeEmulator, shared: Path, *, stricter: bool) -> Any:
    """The webhook's verdict on the example's NodePool created beside its cluster."""
    docs = load_example("proxmox.yaml")
    management(mgmt)
    _serve(mgmt, shared, stricter=stricter)
    seed_documents(mgmt, [d for d in docs if d["kind"] == "TenantCluster"])
    pool = next(d for d in docs if d["kind"] == "NodePool")
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        return await review(api, TENANT_CLUSTERS, NODE_POOLS, "CREATE", pool, None, DEFAULT_KAMAJI, DerivedJudge())


async def test_the_webhook_refuses_a_pool_whose_clones_would_be_refused(mgmt: KubeEmulator, shared: Path) -> None:
    verdict = await _reviewed(mgmt, shared, stricter=True)
    (refusal,) = verdict.refusals
    assert refusal.startswith("ProxmoxMachineTemplate/acme-md0-") and ".spec.template.spec: the ProxmoxMachine " \
        "Cluster API clones from it is refused" in refusal and STRICTER["message"] in refusal, refusal


async def test_the_webhook_admits_a_pool_capmox_can_clone(mgmt: KubeEmulator, shared: Path) -> None:
    assert (await _reviewed(mgmt, shared, stricter=False)).refusals == ()


TWO_CORES = {"rule": "!has(self.numCores) || self.numCores < 2", "message": "two cores or more are not supported"}


async def test_the_webhook_judges_with_the_platforms_kamaji(mgmt: KubeEmulator, shared: Path) -> None:
    """A tenant on a minor only a newer Kamaji serves: the render the webhook judges is the one that Kamaji
    allows, not the tested default's (which refuses to render it: the clones would go unjudged, or the
    review would end in an error)."""
    from tenantctl.spec.compat import KamajiRelease

    docs = load_example("proxmox.yaml")
    docs[0]["spec"]["version"] = "v1.36"
    management(mgmt)
    _serve(mgmt, shared, stricter=True)
    seed_documents(mgmt, [d for d in docs if d["kind"] == "NodePool"])
    newer = KamajiRelease("26.6.5-edge", "the Platform")
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        verdict = await review(api, TENANT_CLUSTERS, NODE_POOLS, "CREATE", docs[0], None, newer, DerivedJudge())
    (refusal,) = verdict.refusals
    assert refusal.startswith("ProxmoxMachineTemplate/acme-md0-") and STRICTER["message"] in refusal


async def test_a_rule_the_judge_cannot_evaluate_refuses_nothing(
    mgmt: KubeEmulator, tenant: KubeEmulator, shared: Path
) -> None:
    """A provider upgrade may bring a CEL function tenantctl does not know: that rule is the API server's to
    judge at clone time, not a reason to stop every tenant's pass."""
    docs = load_example("proxmox.yaml")
    management(mgmt)
    _serve(mgmt, shared, rule={"rule": "self.someFunctionNobodyKnows()", "message": "unknown"})
    seed_documents(mgmt, docs)
    seed_control_plane(mgmt, docs, str(tenant.url).rstrip("/"))
    async with running_operator(mgmt):
        await eventually(lambda: _ready(mgmt).get("status") == "True")


async def test_the_webhook_refuses_a_pools_own_clones_not_a_neighbours_old_ones(
    mgmt: KubeEmulator, shared: Path
) -> None:
    """md0 (2 cores) is refused by a rule a capmox upgrade brought; a change to another pool is not."""
    docs = load_example("proxmox.yaml")
    small = copy.deepcopy(next(d for d in docs if d["kind"] == "NodePool"))
    small["metadata"]["name"] = "small"
    small["spec"]["resources"]["cpu"] = 1
    management(mgmt)
    _serve(mgmt, shared, rule=TWO_CORES)
    seed_documents(mgmt, docs)
    async with KubeClient(Connection.from_server(str(mgmt.url).rstrip("/"))) as api:
        other = await review(api, TENANT_CLUSTERS, NODE_POOLS, "CREATE", small, None, DEFAULT_KAMAJI, DerivedJudge())
        md0 = next(d for d in docs if d["kind"] == "NodePool")
        changed = copy.deepcopy(md0)
        changed["spec"]["replicas"] = 3
        own = await review(api, TENANT_CLUSTERS, NODE_POOLS, "UPDATE", changed, md0, DEFAULT_KAMAJI, DerivedJudge())
    assert other.refusals == (), other.refusals
    (refusal,) = own.refusals
    assert refusal.startswith("ProxmoxMachineTemplate/acme-md0-") and TWO_CORES["message"] in refusal
