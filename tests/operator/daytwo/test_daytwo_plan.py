"""`tenantctl plan` against an emulated management cluster seeded with what the operator applied.

Each of the six classes is produced by one change to the input or to the live objects; an input the
cluster already holds plans `no-op` everywhere and exits 0.
"""

from __future__ import annotations

import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from daytwo_support import NAME, NS, PLURALS, applied, documents, seed_management, url
from kube_emulator import KubeEmulator
from operator_support import kubeconfig_for
from pinning import pin
from typer.testing import CliRunner

from tenant_support import doc
from tenantctl.cli import app
from tenantctl.operator.daytwo.plan import Action, TenantPlan, changed_fields, plan_cluster, render_text
from tenantctl.operator.kube.client import Connection, KubeClient
from tenantctl.render import render_cluster
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(20)]
README = Path(__file__).resolve().parents[3] / "docs" / "day-two.md"


async def plan_of(mgmt: KubeEmulator, docs: list[dict[str, Any]]) -> TenantPlan:
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    async with KubeClient(Connection.from_server(url(mgmt))) as api:
        plan = await plan_cluster(api, cluster, tenant.pools_of(cluster), docs)
    pin(render_text([plan]))
    return plan


def actions(plan: TenantPlan) -> dict[str, str]:
    return {c.ref: c.action.value for c in plan.changes}


def invoke(mgmt: KubeEmulator, tmp_path: Path, docs: list[dict[str, Any]], *args: str) -> Any:
    config, spec = tmp_path / "kubeconfig", tmp_path / "tenant.yaml"
    config.write_text(kubeconfig_for(url(mgmt)))
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, ["plan", "-f", str(spec), "--kubeconfig", str(config), *args])


def live_template(mgmt: KubeEmulator) -> dict[str, Any]:
    (template,) = mgmt.live("proxmoxmachinetemplates")
    return template


async def test_an_input_the_cluster_holds_plans_no_op_everywhere_and_exits_0(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    rendered = await applied(mgmt, docs)
    plan = await plan_of(mgmt, docs)
    assert set(actions(plan).values()) == {"no-op"}
    assert len(plan.changes) == len(rendered) and plan.spec_unchanged
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, docs)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == f"  summary: {len(rendered)} no-op"


async def test_the_management_domain_is_the_one_the_operator_applied_unless_given(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs, "corp.internal")
    assert not (await plan_of(mgmt, docs)).changed
    given = await asyncio.to_thread(invoke, mgmt, tmp_path, docs, "--management-cluster-domain", "cluster.local")
    assert given.exit_code == 3
    assert "~ spec.network.certSANs: " in given.output
    refused = await asyncio.to_thread(invoke, mgmt, tmp_path, docs, "--management-cluster-domain", "not a domain")
    assert refused.exit_code == 2 and "--management-cluster-domain" in refused.output


async def test_each_class_is_told_with_its_detail(mgmt: KubeEmulator, tmp_path: Path) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    old_template = live_template(mgmt)["metadata"]["name"]
    # create: an object the operator renders is gone from the cluster
    mgmt.objects[PLURALS["MachineHealthCheck"], NS, f"{NAME}-md0"].delete()
    # replace: the live TalosConfigTemplate differs (CABPT freezes its spec)
    tct = mgmt.get(PLURALS["TalosConfigTemplate"], NS, f"{NAME}-md0")
    assert tct is not None
    tct["spec"]["template"]["spec"]["generateType"] = "join"
    mgmt.put(PLURALS["TalosConfigTemplate"], tct)
    # prune: a live object with the tenant's inventory labels the render does not hold
    stale = copy.deepcopy(mgmt.get(PLURALS["HelmRelease"], NS, f"{NAME}-cilium"))
    assert stale is not None
    stale["metadata"] = {"name": f"{NAME}-retired", "namespace": NS, "labels": stale["metadata"]["labels"]}
    mgmt.put(PLURALS["HelmRelease"], stale)
    # update in place + rotate: more replicas, bigger disks
    pool = doc(docs, "NodePool")["spec"]
    pool["replicas"] = 3
    pool["proxmox"]["diskSizeGB"] = 40
    plan = await plan_of(mgmt, docs)
    by_ref = {c.ref: c for c in plan.changes}
    assert by_ref[f"MachineHealthCheck/{NAME}-md0"].action is Action.CREATE
    replace = by_ref[f"TalosConfigTemplate/{NAME}-md0"]
    assert replace.action is Action.REPLACE
    assert replace.diff == ("~ spec.template.spec.generateType: join -> none",)
    assert replace.note == "immutable: deleted and created again"
    update = by_ref[f"MachineDeployment/{NAME}-md0"]
    assert update.action is Action.UPDATE
    assert "~ spec.replicas: 2 -> 3" in update.diff
    (rotate,) = plan.rotations
    assert rotate.kind == "ProxmoxMachineTemplate" and rotate.name != old_template
    assert rotate.note == "pool md0: 2 worker(s) replaced, maxSurge 1, maxUnavailable 0"
    assert by_ref[f"ProxmoxMachineTemplate/{old_template}"].action is Action.PRUNE
    assert by_ref[f"HelmRelease/{NAME}-retired"].action is Action.PRUNE
    assert by_ref[f"Cluster/{NAME}"].action is Action.NOOP
    assert set(plan.counts()) == {a.value for a in Action}
    assert not plan.rolls_without_spec_change, "the input did change"
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, docs, "-o", "json")
    assert result.exit_code == 3, result.output
    (data,) = json.loads(result.stdout)
    assert data["summary"] == plan.counts()


async def test_a_kind_only_the_inventory_names_is_still_planned_for_pruning(mgmt: KubeEmulator) -> None:
    """The operator prunes every kind its status.inventory lists, rendered or not (a kind an older render
    had); the plan lists the same kinds, so such an object shows as `prune`, as the next pass will do."""
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    labels = {"app.kubernetes.io/managed-by": "tenantctl", "tenantctl.io/cluster": NAME}
    mgmt.put("v1/configmaps", {"metadata": {"name": f"{NAME}-retired", "namespace": NS, "labels": labels}})
    assert f"ConfigMap/{NAME}-retired" not in actions(await plan_of(mgmt, docs)), "not a kind this render has"
    tc = mgmt.get("tenantctl.io/v1alpha1/tenantclusters", NS, NAME)
    assert tc is not None
    tc["status"]["inventory"] = ["v1/ConfigMap"]
    mgmt.put("tenantctl.io/v1alpha1/tenantclusters", tc)
    assert actions(await plan_of(mgmt, docs))[f"ConfigMap/{NAME}-retired"] == "prune"


async def test_a_cluster_scoped_inventory_kind_is_planned_by_the_tenants_namespace_too(mgmt: KubeEmulator) -> None:
    """A cluster-scoped object carries the tenant's namespace as a label (no namespace of its own): the
    plan prunes this tenant's and never a same-named tenant's of another namespace, as the operator does."""
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    labels = {"app.kubernetes.io/managed-by": "tenantctl", "tenantctl.io/cluster": NAME}
    for name, namespace in (("mine", NS), ("theirs", "tenant-other")):
        mgmt.put("rbac.authorization.k8s.io/v1/clusterroles", {"metadata": {
            "name": f"{NAME}-{name}", "labels": {**labels, "tenantctl.io/namespace": namespace}}})
    tc = mgmt.get("tenantctl.io/v1alpha1/tenantclusters", NS, NAME)
    assert tc is not None
    tc["status"]["inventory"] = ["rbac.authorization.k8s.io/v1/ClusterRole"]
    mgmt.put("tenantctl.io/v1alpha1/tenantclusters", tc)
    planned = actions(await plan_of(mgmt, docs))
    assert planned[f"ClusterRole/{NAME}-mine"] == "prune"
    assert f"ClusterRole/{NAME}-theirs" not in planned


async def test_a_kind_the_cluster_does_not_serve_is_planned_as_a_create_saying_so(mgmt: KubeEmulator) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    for res in [r for r, info in mgmt.resources.items() if info.kind == "MachineHealthCheck"]:
        del mgmt.resources[res]
    change = next(c for c in (await plan_of(mgmt, docs)).changes if c.kind == "MachineHealthCheck")
    assert change.action is Action.CREATE
    assert change.note == "cluster.x-k8s.io/v1beta1/MachineHealthCheck is not served yet"


def test_a_secret_change_is_told_without_its_value() -> None:
    live = {"kind": "Secret", "data": {"token": "c3RhbGU="}}
    desired = {"kind": "Secret", "stringData": {"token": "fresh", "url": "https://pve"}}
    assert changed_fields("Secret", live, desired) == ("~ data.token: (value not shown)",
                                                        "+ data.url: (value not shown)")


def test_a_multi_line_string_is_diffed_by_line() -> None:
    diff = changed_fields("TalosConfigTemplate", {"data": "a: 1\nb: 2\n"}, {"data": "a: 1\nb: 3\n"})
    assert diff == ("~ data:", "    -b: 2", "    +b: 3")


async def test_new_machine_templates_for_an_unchanged_input_are_printed_prominently(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    """As after a tenantctl upgrade whose render changed the template: live specs equal the file's."""
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    template = live_template(mgmt)
    mgmt.objects[PLURALS["ProxmoxMachineTemplate"], NS, template["metadata"]["name"]].delete()
    template["metadata"]["name"] = f"{NAME}-md0-0ldrel0s"
    mgmt.put(PLURALS["ProxmoxMachineTemplate"], template)
    plan = await plan_of(mgmt, docs)
    assert plan.spec_unchanged and plan.rolls_without_spec_change
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, docs)
    assert result.exit_code == 3
    assert "!! WORKERS WILL ROLL WITHOUT A SPEC CHANGE" in result.output
    assert "!!   pool md0: 2 worker(s) replaced, maxSurge 1, maxUnavailable 0" in result.output


async def test_a_new_tenant_plans_create_everywhere_and_writes_nothing(mgmt: KubeEmulator) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    mgmt.objects["v1/secrets", NS, f"{NAME}-talos-secrets"].delete()
    before = len(mgmt.writes())
    plan = await plan_of(mgmt, docs)
    assert set(actions(plan).values()) == {"create"}
    assert plan.changes[0].ref == f"Secret/{NAME}-talos-secrets"
    assert len(mgmt.writes()) == before


async def test_refused_input_exits_2(mgmt: KubeEmulator, tmp_path: Path) -> None:
    docs = documents()
    doc(docs, "NodePool")["spec"]["replicas"] = -1
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, docs)
    assert result.exit_code == 2
    assert "spec.replicas" in result.output


async def test_readme_shows_a_plan_from_this_fixture(mgmt: KubeEmulator) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    doc(docs, "NodePool")["spec"]["replicas"] = 3
    doc(docs, "NodePool")["spec"]["proxmox"]["diskSizeGB"] = 40
    text = render_text([await plan_of(mgmt, docs)])
    block = f"```text\n$ tenantctl plan -f tenant.yaml\n{text}```"
    assert block in README.read_text(), f"docs/day-two.md's plan example is stale; it now reads:\n{block}"


async def test_a_version_change_plans_the_upgrade_stages_in_the_operators_order(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    newer = copy.deepcopy(docs)
    newer[0]["spec"]["version"] = "v1.34"
    plan = await plan_of(mgmt, newer)
    assert plan.upgrade == [
        "1. control plane acme: v1.33.13 -> v1.34.9 (no worker replaced; the pools wait until it reports the "
        "target with every apiserver ready)",
        "2. pool md0: v1.33.13 / Talos v1.13.6 -> v1.34.9 / Talos v1.13.6: 2 worker(s) replaced, maxSurge 1, "
        "maxUnavailable 0 (after the previous stage has rolled out)",
    ]
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, newer)
    assert result.exit_code == 3 and "  upgrade, in this order:\n    1. control plane acme" in result.output


async def test_a_talos_change_on_proxmox_rotates_the_pool_and_names_the_new_template(
    mgmt: KubeEmulator,
) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    newer = copy.deepcopy(docs)
    newer[0]["spec"]["talos"]["version"] = "v1.13.7"
    plan = await plan_of(mgmt, newer)
    assert plan.upgrade == [
        "1. pool md0: v1.33.13 / Talos v1.13.6 -> v1.33.13 / Talos v1.13.7: 2 worker(s) replaced, maxSurge 1, "
        "maxUnavailable 0"]
    [rotation] = plan.rotations
    assert rotation.note == "pool md0: 2 worker(s) replaced, maxSurge 1, maxUnavailable 0"
    rendered = render_cluster(parse_tenant_documents(newer).clusters[0], parse_tenant_documents(newer).pools, None)
    template = next(o for o in rendered if o["kind"] == "ProxmoxMachineTemplate")
    assert rotation.name == template["metadata"]["name"]
    assert template["spec"]["template"]["spec"]["templateSelector"]["matchTags"] == ["talos", "talos-v1.13.7"]


async def test_a_skipped_minor_is_refused_by_plan_with_the_webhooks_words(mgmt: KubeEmulator, tmp_path: Path) -> None:
    docs = documents()
    seed_management(mgmt, docs, None)
    await applied(mgmt, docs)
    skipped = copy.deepcopy(docs)
    skipped[0]["spec"]["version"] = "v1.35"
    result = await asyncio.to_thread(invoke, mgmt, tmp_path, skipped)
    assert result.exit_code == 2
    assert ("TenantCluster/acme.spec.version: v1.33 → v1.35 skips a minor: Kamaji and the Kubernetes skew policy "
            "upgrade one minor at a time") in result.output
