"""`tenantctl get` against an emulated management cluster: rows from TenantClusters, NodePools, MachineDeployments."""

from __future__ import annotations

import asyncio
import datetime
import json
from pathlib import Path
from typing import Any

import pytest
from daytwo_support import NAME, NOW, NS, UPGRADING, applied, documents, seed_management, set_status, url
from kube_emulator import Fault, KubeEmulator
from operator_support import kubeconfig_for
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.operator.daytwo.overview import TenantRow, age, list_pools, list_tenants, table
from tenantctl.operator.kube.client import Connection, KubeClient

pytestmark = [pytest.mark.timeout(20)]
FIXED_NOW = datetime.datetime.fromisoformat(NOW.replace("Z", "+00:00"))


async def seeded(mgmt: KubeEmulator) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    set_status(mgmt, "MachineDeployment", f"{NAME}-md0", {"replicas": 2, "readyReplicas": 1})


def invoke(mgmt: KubeEmulator, tmp_path: Path, *args: str) -> Any:
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_for(url(mgmt)))
    return CliRunner().invoke(app, ["get", *args, "--kubeconfig", str(config)])


async def test_a_tenant_row_has_phase_endpoint_and_ready_over_desired_workers(mgmt: KubeEmulator) -> None:
    await seeded(mgmt)
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        rows = await list_tenants(api, NS, FIXED_NOW)
    assert rows == [TenantRow(NS, NAME, "proxmox", "v1.33", "Provisioning", "192.0.2.10", 1, 2, "2d",
                              "WaitingForTenantAPI", "tenant apiserver does not answer")]
    assert table(rows, TenantRow.HEADERS, wide=False).splitlines() == [
        "NAMESPACE     NAME   SUBSTRATE   VERSION   PHASE          ENDPOINT     POOLS   AGE",
        "tenant-acme   acme   proxmox     v1.33     Provisioning   192.0.2.10   1/2     2d",
    ]


async def test_pools_come_one_row_per_nodepool_with_their_machine_deployment(mgmt: KubeEmulator) -> None:
    await seeded(mgmt)
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        (row,) = await list_pools(api, None, FIXED_NOW)
    assert (row.namespace, row.name, row.cluster, row.ready, row.desired, row.machine_deployment) == (
        NS, "md0", NAME, 1, 2, f"{NAME}-md0")


async def test_the_command_prints_tables_wide_and_json(mgmt: KubeEmulator, tmp_path: Path) -> None:
    await seeded(mgmt)
    plain = await asyncio.to_thread(invoke, mgmt, tmp_path, "tenants", "-n", NS)
    assert plain.exit_code == 0, plain.output
    assert plain.output.splitlines()[1].split()[:7] == [NS, NAME, "proxmox", "v1.33", "Provisioning", "192.0.2.10",
                                                        "1/2"]
    wide = await asyncio.to_thread(invoke, mgmt, tmp_path, "-A", "-o", "wide")
    assert "READY-REASON" in wide.output and "WaitingForTenantAPI" in wide.output
    as_json = await asyncio.to_thread(invoke, mgmt, tmp_path, "pools", "-A", "-o", "json")
    assert [(r["name"], r["ready"], r["desired"]) for r in json.loads(as_json.output)] == [("md0", 1, 2)]
    elsewhere = await asyncio.to_thread(invoke, mgmt, tmp_path, "-n", "other")
    assert elsewhere.exit_code == 0 and "No tenants found in namespace other." in elsewhere.output


async def test_namespace_and_all_namespaces_together_are_refused(mgmt: KubeEmulator, tmp_path: Path) -> None:
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, "-n", NS, "-A")
    assert result.exit_code == 2
    assert "--namespace" in result.output and "exclude each other" in result.output


async def test_an_unreachable_management_cluster_is_exit_1_not_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "kubeconfig"
    config.write_text(kubeconfig_for("http://127.0.0.1:9"))
    result = await asyncio.to_thread(CliRunner().invoke, app, ["get", "--kubeconfig", str(config)])
    assert result.exit_code == 1 and "management cluster:" in result.output


def test_age_is_kubectl_short() -> None:
    assert [age(t, FIXED_NOW) for t in ("2026-11-30T09:59:15Z", "2026-11-30T09:48:00Z", "2026-11-30T05:00:00Z",
                                        "2026-11-27T10:00:00Z", None)] == ["45s", "12m", "5h", "3d", "-"]


async def test_an_upgrading_tenant_shows_what_runs_and_the_target(mgmt: KubeEmulator) -> None:
    await seeded(mgmt)
    set_status(mgmt, "TenantCluster", NAME, UPGRADING)
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        [row] = await list_tenants(api, NS, FIXED_NOW)
    assert row.version == "v1.33.13→v1.34.9"


async def test_a_tenant_the_operator_has_not_written_yet_shows_dashes(mgmt: KubeEmulator) -> None:
    await seeded(mgmt)
    set_status(mgmt, "TenantCluster", NAME, {})
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        (row,) = await list_tenants(api, NS, FIXED_NOW)
    assert (row.phase, row.endpoint) == ("-", "-")


async def test_pools_of_one_namespace_need_no_cluster_wide_read(mgmt: KubeEmulator) -> None:
    """A platform team member bound to the tenant's namespace only can list its pools."""
    await seeded(mgmt)
    mgmt.fail(Fault("GET", "machinedeployments", status=403, times=100, message="forbidden", cluster_wide=True))
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        (row,) = await list_pools(api, NS, FIXED_NOW)
    assert (row.name, row.machine_deployment) == ("md0", f"{NAME}-md0")


async def test_a_spread_pools_machine_deployments_are_listed_in_name_order(mgmt: KubeEmulator) -> None:
    await seeded(mgmt)
    md = mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", NS, f"{NAME}-md0")
    assert md is not None
    mgmt.objects["cluster.x-k8s.io/v1beta1/machinedeployments", NS, f"{NAME}-md0"].delete()
    for group in ("pve2", "pve1"):
        mgmt.put("cluster.x-k8s.io/v1beta1/machinedeployments",
                 {**md, "metadata": {**md["metadata"], "name": f"{NAME}-md0-{group}", "uid": group}})
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        (row,) = await list_pools(api, NS, FIXED_NOW)
    assert row.machine_deployment == f"{NAME}-md0-pve1,{NAME}-md0-pve2"


async def test_a_machine_deployment_without_replicas_counts_none_wanted(mgmt: KubeEmulator) -> None:
    """An autoscaled MachineDeployment may leave spec.replicas to the autoscaler: nothing is counted for it."""
    await seeded(mgmt)
    md = mgmt.get("cluster.x-k8s.io/v1beta1/machinedeployments", NS, f"{NAME}-md0")
    assert md is not None
    md["spec"].pop("replicas")
    md["status"] = {}
    mgmt.put("cluster.x-k8s.io/v1beta1/machinedeployments", md)
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        (tenant,) = await list_tenants(api, NS, FIXED_NOW)
        (pool,) = await list_pools(api, None, FIXED_NOW)
    assert (tenant.pools_ready, tenant.pools_desired) == (0, 0) and (pool.ready, pool.desired) == (0, 0)
