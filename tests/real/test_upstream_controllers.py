"""Cluster API core and CABPT as actors on what the operator applies (issue 37).

Cluster API's manager (controllers and webhooks, acting on this module's namespace) and CABPT's run beside
the real API server; the operator runs as its ServiceAccount. The test plays only what has no manager here:
Kamaji (the KamajiControlPlane's status) and the tenant's nodes (there is no kubelet, so no Machine ever
becomes available). Cluster API then does what it does in production: it turns each MachineDeployment into
a MachineSet and Machines, cloning tenantctl's machine template and TalosConfigTemplate for each Machine,
and during an upgrade its own MachineSet preflight checks refuse to create a Machine newer than the
control plane. What Cluster API writes into the MachineDeployments' status is what the operator reads to
release the next pool.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import FAST, condition, one_more_pass
from typer.testing import CliRunner

from real_api import Api
from real_control_plane import ControlPlane
from real_seed import eventually, operator_connection, running_operator, seed_control_plane, seed_tenant
from tenant_support import load_example
from tenantctl.cli import app
from upstream_support import all_running, kamaji_reports

pytestmark = [pytest.mark.timeout(300)]

NS, NAME = "capi-acting", "demo"
KEY = (NS, NAME)
OLD, NEW = "v1.34.9", "v1.35.6"
CAPI = "cluster.x-k8s.io/v1beta1"
TC = ("tenantctl.io/v1alpha1", "TenantCluster")
KCP = ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")
POOLS = ("demo-big", "demo-md0")
# Cluster API takes seconds to delete the Machines here (no VM behind them): the teardown waits for it.
ACTED_ON = dataclasses.replace(FAST, cluster_deletion_timeout=90.0)


@pytest.fixture(scope="module")
def actors(installed: Any, admin: Api, management: ControlPlane,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """CABPT first (its webhooks judge the TalosConfigs Cluster API clones), then Cluster API; their logs."""
    with all_running(("cabpt", "capi"), admin, management, tmp_path_factory, NS) as logs:
        yield logs


def _tenant_docs() -> list[dict[str, Any]]:
    docs = copy.deepcopy(load_example("kubevirt.yaml"))
    for d in docs:
        d["metadata"]["namespace"] = NS
    docs[0]["spec"]["version"] = "v1.34"
    return docs


async def _grant_template_replacement(admin: Api, docs: list[dict[str, Any]], tmp_path: Path) -> None:
    """What the platform admin applies for a new tenant: `tenantctl install -f` renders the Role that lets the
    operator delete (to create again) exactly this tenant's TalosConfigTemplates."""
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    result = await asyncio.to_thread(CliRunner().invoke, app, ["install", "-f", str(spec)])
    assert result.exit_code == 0, result.output
    for obj in yaml.safe_load_all(result.stdout):
        if obj and obj["kind"] in ("Role", "RoleBinding") and obj["metadata"].get("namespace") == NS:
            admin.apply(obj, manager="platform-admin")


def _machine_sets(admin: Api, pool: str) -> list[dict[str, Any]]:
    return admin.list(CAPI, "MachineSet", NS, f"cluster.x-k8s.io/deployment-name={pool}")


def _machines(admin: Api, pool: str) -> list[dict[str, Any]]:
    return admin.list(CAPI, "Machine", NS, f"cluster.x-k8s.io/deployment-name={pool}")


def _versions(objs: list[dict[str, Any]]) -> list[str]:
    return sorted(o["spec"]["template"]["spec"]["version"] if "template" in o["spec"] else o["spec"]["version"]
                  for o in objs)


def _md(admin: Api, pool: str) -> dict[str, Any]:
    obj = admin.get(CAPI, "MachineDeployment", NS, pool)
    assert obj is not None, pool
    return obj


def _held_by_preflight(ms: dict[str, Any]) -> str:
    created = condition(ms, "MachinesCreated")
    return str(created.get("message", "")) if created.get("reason") == "PreflightCheckFailed" else ""


def _generations(admin: Api) -> dict[str, int]:
    kinds = [(CAPI, "Cluster"), (CAPI, "MachineDeployment"), (CAPI, "MachineHealthCheck"), KCP,
             ("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate")]
    return {f"{kind}/{o['metadata']['name']}": o["metadata"]["generation"]
            for api_version, kind in kinds for o in admin.list(api_version, kind, NS, f"tenantctl.io/cluster={NAME}")}


async def test_cluster_api_builds_each_pool_from_tenantctls_templates_and_holds_no_pool_ahead(
    actors: dict[str, Path], admin: Api, management: ControlPlane, tenant_plane: ControlPlane, tmp_path: Path,
) -> None:
    docs = _tenant_docs()
    seed_tenant(admin, docs)
    seed_control_plane(admin, docs, tenant_plane)
    await _grant_template_replacement(admin, docs, tmp_path)
    async with running_operator(operator_connection(management), ACTED_ON) as ctx:
        await eventually(lambda: condition(admin.get(*TC, *KEY), "Ready").get("status") == "True", 120,
                         what="the tenant Ready")
        kamaji_reports(admin, NS, NAME, OLD)

        # Cluster API builds each pool: a MachineSet, and a Machine per replica (the autoscaled pool at its
        # minimum), each with its own copy of tenantctl's templates.
        for pool in POOLS:
            await eventually(lambda pool=pool: len(_machines(admin, pool)) == 1, 90,
                             what=f"Cluster API's Machine of {pool} ({actors['capi']})")
            md = _md(admin, pool)
            assert _versions(_machine_sets(admin, pool)) == [OLD] and _versions(_machines(admin, pool)) == [OLD]
            (machine,) = _machines(admin, pool)
            template = md["spec"]["template"]["spec"]
            for ref, machine_ref in ((template["infrastructureRef"], machine["spec"]["infrastructureRef"]),
                                     (template["bootstrap"]["configRef"], machine["spec"]["bootstrap"]["configRef"])):
                source = admin.get(ref["apiVersion"], ref["kind"], NS, ref["name"])
                clone = admin.get(machine_ref["apiVersion"], machine_ref["kind"], NS, machine_ref["name"])
                assert source is not None and clone is not None, (ref, machine_ref)
                assert machine_ref["kind"] == ref["kind"].removesuffix("Template")
                assert clone["spec"] == source["spec"]["template"]["spec"] | clone["spec"], \
                    f"{machine_ref['kind']} of {pool} is not tenantctl's template"

        # Idle, the operator writes no spec Cluster API has touched since (no field fought over).
        await one_more_pass(ctx, KEY)
        settled = _generations(admin)
        await one_more_pass(ctx, KEY)
        await one_more_pass(ctx, KEY)
        assert _generations(admin) == settled

        upgraded = copy.deepcopy(docs[0])
        upgraded["spec"]["version"] = "v1.35"
        admin.apply(upgraded, manager="kubectl")
        await eventually(lambda: admin.get(*KCP, *KEY)["spec"]["version"] == NEW, 60,  # type: ignore[index]
                         what="the control plane moved first")
        await one_more_pass(ctx, KEY)
        assert [_versions(_machine_sets(admin, p)) for p in POOLS] == [[OLD], [OLD]]

        # Kamaji reports the target: the first pool moves, and Cluster API's preflight checks (a MachineSet
        # never newer than its control plane, never while it upgrades) let its new Machine be created.
        kamaji_reports(admin, NS, NAME, NEW)
        await eventually(lambda: len(_machines(admin, "demo-big")) == 2, 90,
                         what="Cluster API's new Machine of demo-big")
        assert _versions(_machines(admin, "demo-big")) == [OLD, NEW]
        assert [_held_by_preflight(ms) for ms in _machine_sets(admin, "demo-big")] == ["", ""]
        # No Machine of it is available (there are no kubelets): Cluster API's status of the first pool
        # says so, and the operator holds the second.
        await one_more_pass(ctx, KEY)
        await one_more_pass(ctx, KEY)
        assert _md(admin, "demo-md0")["spec"]["template"]["spec"]["version"] == OLD
        assert _versions(_machines(admin, "demo-md0")) == [OLD]
        status = (admin.get(*TC, *KEY) or {})["status"]["upgrade"]
        assert status["stage"] == "Pool" and status["pool"] == "big", status

        # Deleted mid-upgrade: the operator's teardown waits for Cluster API's, which deletes every Machine
        # with its clones before the Cluster, and only then lets the control plane and the inventory go.
        assert admin.delete(*TC, *KEY)
        await eventually(lambda: admin.get(*TC, *KEY) is None, 120, what="the TenantCluster gone")
    for kind in ("Cluster", "MachineDeployment", "MachineSet", "Machine"):
        assert admin.list(CAPI, kind, NS) == [], kind
    for api_version, kind in (("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfig"),
                              ("infrastructure.cluster.x-k8s.io/v1alpha1", "KubevirtMachine")):
        assert admin.list(api_version, kind, NS) == [], kind
    teardown = [e for e in admin.list("v1", "Event", NS)
                if e["involvedObject"]["name"] == NAME and e["reason"] in ("Teardown", "Leftover")]
    assert teardown and all(e["reason"] == "Teardown" for e in teardown), [e["message"] for e in teardown]
    (cluster_api,) = [e["message"] for e in teardown if e["message"].startswith("ClusterAPI:")]
    # Cluster API deleted the control plane itself once the Machines were gone (its controlPlaneRef).
    assert cluster_api.endswith("Cluster/demo"), cluster_api
    assert admin.get(*KCP, *KEY) is None
