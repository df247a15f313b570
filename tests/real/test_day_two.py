"""The day-two commands against the real management API server: get, describe, plan, kubeconfig and
`doctor management`, run as the platform admin would, on a tenant the operator brought to Ready."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import FAST, condition
from typer.testing import CliRunner

from real_api import Api
from real_control_plane import ControlPlane, session_for
from real_seed import eventually, operator_connection, running_operator, seed_control_plane, seed_tenant
from tenant_support import EXAMPLES, load_example
from tenantctl.cli import app

pytestmark = [pytest.mark.timeout(240)]

TC = ("tenantctl.io/v1alpha1", "TenantCluster")
KEY = ("tenant-demo", "demo")


@pytest.fixture(scope="module")
def demo(installed: Any, admin: Api, management: ControlPlane,
         tenant_planes: Callable[[], ControlPlane]) -> Iterator[str]:
    """The kubevirt example, Ready; the admin kubeconfig's path."""
    tenant_plane = tenant_planes()
    docs = load_example("kubevirt.yaml")
    seed_tenant(admin, docs)
    seed_control_plane(admin, docs, tenant_plane)

    async def converge() -> None:
        async with running_operator(operator_connection(management), FAST):
            await eventually(lambda: condition(admin.get(*TC, *KEY), "Ready").get("status") == "True", 120)

    asyncio.run(converge())
    yield str(management.admin_kubeconfig_path)


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _endpoint(admin: Api) -> str:
    service = admin.get("v1", "Service", "tenant-demo", "demo")
    assert service is not None
    return str(service["spec"]["clusterIP"])


def test_get_lists_the_tenant_with_its_phase(demo: str, admin: Api) -> None:
    result = run("get", "tenants", "-A", "-o", "json", "--kubeconfig", demo)
    assert result.exit_code == 0, result.output
    (row,) = [r for r in json.loads(result.stdout) if (r["namespace"], r["name"]) == KEY]
    assert (row["substrate"], row["phase"], row["endpoint"]) == ("kubevirt", "Ready", _endpoint(admin))
    pools = run("get", "pools", "-n", "tenant-demo", "-o", "json", "--kubeconfig", demo)
    assert pools.exit_code == 0, pools.output
    assert sorted(p["name"] for p in json.loads(pools.stdout)) == ["big", "md0"]


def _tree(node: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {node["label"]: node}
    for child in node.get("children") or []:
        out.update(_tree(child))
    return out


def test_describe_reads_the_tenant_and_its_api(demo: str, admin: Api) -> None:
    result = run("describe", "tenant", "demo", "-n", "tenant-demo", "-o", "json", "--kubeconfig", demo)
    assert result.exit_code == 0, result.output
    tree = _tree(json.loads(result.stdout))
    assert tree["TenantCluster tenant-demo/demo"]["mark"] == "ok"
    assert tree["Ready=True"]["detail"] == "Reconciled: all objects applied, tenant bootstrapped"
    assert tree["EndpointReady=True"]["detail"] == f"EndpointReady: apiserver at {_endpoint(admin)}"
    # Nothing runs the control plane or the machines here: describe says so, with the next step.
    assert tree["KamajiControlPlane demo"]["mark"] == "wrong"
    assert tree["KamajiControlPlane demo"]["next"].startswith("kubectl -n tenant-demo get tenantcontrolplane demo")


def test_plan_of_the_applied_input_changes_nothing(demo: str) -> None:
    """Every object the operator applied reads back equal to the render: the real server's defaults
    (a Deployment's strategy, a Service's ports, a HelmRelease's intervals) are no change."""
    result = run("plan", "-f", str(EXAMPLES / "kubevirt.yaml"), "-o", "json", "--kubeconfig", demo)
    assert result.exit_code == 0, result.output
    (tenant,) = json.loads(result.stdout)
    assert len(tenant["changes"]) >= 20
    assert [c for c in tenant["changes"] if c["action"] != "no-op" or c["diff"]] == []


def test_kubeconfig_prints_what_reaches_the_tenants_api(demo: str, tmp_path: Path) -> None:
    result = run("kubeconfig", "demo", "-n", "tenant-demo", "--kubeconfig", demo)
    assert result.exit_code == 0, result.output
    server, session = session_for(yaml.safe_load(result.stdout), tmp_path)
    answer = session.get(f"{server}/version", timeout=10)
    assert answer.status_code == 200 and answer.json()["gitVersion"] == "v1.34.4", answer.text


def test_doctor_management_passes_the_crds_and_names_the_controllers_it_lacks(demo: str) -> None:
    result = run("doctor", "management", "-o", "json", "--kubeconfig", demo)
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    crds = [r for r in report["rows"] if r["check"] == "crds"]
    assert crds and all(r["status"] == "PASS" for r in crds), crds
    failing = [r for r in report["rows"] if r["status"] == "FAIL"]
    assert failing and all(r["check"] != "crds" for r in failing)
    assert {r["subject"] for r in failing} >= {"Deployment kamaji", "Deployment helm-controller", "DataStores"}


def test_plan_judges_the_render_against_the_pulled_crds(
    demo: str, pulled_crds: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without pulled CRDs plan says how to get them (and --strict refuses); with them nothing is left
    unjudged, so no such line."""
    argv = ("plan", "-f", str(EXAMPLES / "kubevirt.yaml"), "-o", "json", "--kubeconfig", demo)
    bare = run(*argv)
    assert bare.exit_code == 0 and "tenantctl crds pull" in bare.stderr, bare.output
    strict = run(*argv, "--strict")
    assert strict.exit_code == 2 and "plan: " in strict.stderr and "crds pull" in strict.stderr, strict.output
    monkeypatch.setenv("TENANTCTL_CRDS_CACHE", str(pulled_crds))
    pulled = run(*argv, "--strict")
    assert pulled.exit_code == 0, pulled.output
    assert "crds pull" not in pulled.stderr


def test_plan_refuses_a_render_the_crds_refuse(demo: str, pulled_crds: Path, tmp_path: Path) -> None:
    """A CRD tightened by hand (a shorter clusterName than the render's) turns plan into a refusal that names
    the object, before anything would be applied."""
    import shutil

    crds = tmp_path / "crds"
    shutil.copytree(pulled_crds, crds)
    (path,) = [p for p in crds.rglob("*.yaml") if "kind: MachineHealthCheck" in p.read_text()]
    docs = list(yaml.safe_load_all(path.read_text()))
    for doc in docs:
        for version in doc["spec"]["versions"]:
            spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
            spec["properties"]["clusterName"]["maxLength"] = 2
    path.write_text(yaml.safe_dump_all(docs))
    result = run("plan", "-f", str(EXAMPLES / "kubevirt.yaml"), "--kubeconfig", demo,
                 *[a for d in sorted(crds.iterdir()) for a in ("--crds", str(d))])
    assert result.exit_code == 2, result.output
    assert "MachineHealthCheck" in result.stderr and "clusterName" in result.stderr, result.stderr
