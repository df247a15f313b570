"""Upgrading the operator's layout (a Deployment to StatefulSets per shard, three shards to two): what
the new render does not hold must not go on reconciling. `--apply` refuses it unless `--prune` deletes
it; printed output comes with the kubectl commands that select exactly it."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from kube_emulator import KubeEmulator, declare, matches_selector
from operator_support import kubeconfig_for, management
from typer.testing import CliRunner

from tenant_support import load_example
from tenantctl.cli import app
from tenantctl.operator.install.apply import prune_command
from tenantctl.operator.install.objects import Topology, install_objects
from tenantctl.render import render_cluster
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(60)]

NS = "tenantctl-system"
STS = "apps/v1/statefulsets"
DEPLOYMENTS = "apps/v1/deployments"
PEERINGS = "kopf.dev/v1/clusterkopfpeerings"
INSTALLED_KINDS = [
    (STS, "StatefulSet", True, ()),
    ("admissionregistration.k8s.io/v1/validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False, ()),
    ("admissionregistration.k8s.io/v1/validatingadmissionpolicies", "ValidatingAdmissionPolicy", False, ()),
    ("networking.k8s.io/v1/networkpolicies", "NetworkPolicy", True, ()),
    ("admissionregistration.k8s.io/v1/validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", False,
     ()),
]
OLD_DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "tenantctl-operator", "namespace": NS, "labels": {
        "app.kubernetes.io/name": "tenantctl-operator", "app.kubernetes.io/managed-by": "tenantctl"}},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": "tenantctl-operator"}}},
}


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


def selected(command: str, candidates: dict[str, list[dict[str, Any]]]) -> set[str]:
    """`origin:Kind/name` of the candidates the printed `kubectl delete … -l '<selector>'` lines would delete."""
    found = set()
    kinds = {"deployment": "Deployment", "statefulset": "StatefulSet", "clusterkopfpeering": "ClusterKopfPeering"}
    for line in command.splitlines():
        wanted, selector = {kinds[k] for k in line.split()[2].split(",")}, line.split("-l ")[1].strip("'")
        for origin, objects in candidates.items():
            for obj in objects:
                if obj["kind"] in wanted and matches_selector(obj["metadata"].get("labels") or {}, selector):
                    found.add(f"{origin}:{obj['kind']}/{obj['metadata']['name']}")
    return found


def test_the_printed_prune_commands_select_every_other_layout_and_nothing_of_this_one_or_a_tenant() -> None:
    three = install_objects(topology=Topology(shards=3))
    two = install_objects(topology=Topology(shards=2, replicas=2))
    one = install_objects()
    docs = load_example("kubevirt.yaml")
    tenant = parse_tenant_documents(docs)
    tenant_objects = render_cluster(tenant.clusters[0], tenant.pools_of(tenant.clusters[0]), None)
    assert of_kind(tenant_objects, "Deployment"), "a tenant's own workloads are among the candidates"
    candidates = {"old": [OLD_DEPLOYMENT], "three": three, "one": one, "two": two, "tenant": tenant_objects}
    assert selected(prune_command(2), candidates) == {
        "old:Deployment/tenantctl-operator",
        "one:StatefulSet/tenantctl-operator",
        "one:ClusterKopfPeering/tenantctl-operator-shard-0-of-1",
        *(f"three:StatefulSet/tenantctl-operator-shard-{i}" for i in range(3)),
        *(f"three:ClusterKopfPeering/tenantctl-operator-shard-{i}-of-3" for i in range(3)),
    }


def test_printing_says_how_to_prune_on_stderr_and_keeps_stdout_yaml() -> None:
    result = CliRunner().invoke(app, ["install", "--shards", "2"])
    assert result.exit_code == 0
    assert prune_command(2) in result.stderr and "--apply --prune" in result.stderr
    assert result.stdout.startswith("apiVersion:")


@pytest.mark.parametrize("flag", [["--prune"], ["--kubeconfig", "k"], ["--context", "c"]])
def test_flags_that_act_on_the_cluster_need_apply(flag: list[str]) -> None:
    result = CliRunner().invoke(app, ["install", *flag])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"{flag[0]}: ") and "only with --apply" in result.stderr


def old_install(mgmt: KubeEmulator) -> list[dict[str, Any]]:
    """An operator installed before shards (a Deployment), then as three shards: everything in the cluster."""
    management(mgmt)
    declare(mgmt, INSTALLED_KINDS)
    three = install_objects(topology=Topology(shards=3))
    mgmt.put(DEPLOYMENTS, copy.deepcopy(OLD_DEPLOYMENT))
    declare(mgmt, [(PEERINGS, "ClusterKopfPeering", False, ())])
    for obj in of_kind(three, "StatefulSet"):
        mgmt.put(STS, copy.deepcopy(obj))
    for obj in of_kind(three, "ClusterKopfPeering"):
        mgmt.put(PEERINGS, copy.deepcopy(obj))
    return three


async def install(mgmt: KubeEmulator, tmp_path: Path, *args: str) -> Result:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(kubeconfig_for(str(mgmt.url).rstrip("/")))
    return await asyncio.to_thread(
        CliRunner().invoke, app, ["install", "--apply", "--kubeconfig", str(kubeconfig), *args]
    )


def names(mgmt: KubeEmulator, plural: str) -> set[str]:
    return {o["metadata"]["name"] for o in mgmt.live(plural)}


async def test_applying_a_new_layout_over_an_old_one_is_refused_naming_every_leftover_and_writes_nothing(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    old_install(mgmt)
    result = await install(mgmt, tmp_path, "--shards", "2")
    assert result.exit_code == 2, result.output
    leftovers = {line.split(": ")[0] for line in result.stderr.splitlines()}
    assert leftovers == {
        f"Deployment {NS}/tenantctl-operator",
        f"StatefulSet {NS}/tenantctl-operator-shard-2",
        *(f"ClusterKopfPeering tenantctl-operator-shard-{i}-of-3" for i in range(3)),
    }
    assert "--prune" in result.stderr
    assert mgmt.write_requests == [], "refused before anything was written"


async def test_apply_with_prune_leaves_exactly_the_new_layout(mgmt: KubeEmulator, tmp_path: Path) -> None:
    old_install(mgmt)
    mgmt.put(DEPLOYMENTS, {"metadata": {"name": "demo-autoscaler", "namespace": "tenant-demo",
                                        "labels": {"app.kubernetes.io/managed-by": "tenantctl"}}})
    result = await install(mgmt, tmp_path, "--shards", "2", "--replicas", "2", "--prune")
    assert result.exit_code == 0, result.output
    two = install_objects(topology=Topology(shards=2, replicas=2))
    assert result.stdout.count("applied ") == len(two)
    assert sorted(line for line in result.stdout.splitlines() if line.startswith("pruned ")) == sorted([
        f"pruned Deployment {NS}/tenantctl-operator",
        f"pruned StatefulSet {NS}/tenantctl-operator-shard-2",
        *(f"pruned ClusterKopfPeering tenantctl-operator-shard-{i}-of-3" for i in range(3)),
    ])
    assert names(mgmt, "statefulsets") == {"tenantctl-operator-shard-0", "tenantctl-operator-shard-1"}
    assert names(mgmt, "clusterkopfpeerings") == {f"tenantctl-operator-shard-{i}-of-2" for i in range(2)}
    assert names(mgmt, "deployments") == {"demo-autoscaler"}, "a tenant's workload is never a leftover"
    for sts in mgmt.live("statefulsets"):
        env = {e["name"]: e.get("value") for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]}
        assert env["TENANTCTL_SHARD"].endswith("/2") and sts["spec"]["replicas"] == 2
    since = len(mgmt.write_requests)
    again = await install(mgmt, tmp_path, "--shards", "2", "--replicas", "2")
    assert again.exit_code == 0, again.output
    assert "pruned" not in again.stdout
    assert not [w for w in mgmt.write_requests[since:] if w[0] == "DELETE"]


async def test_a_first_install_waits_for_the_peering_crd_it_applies(mgmt: KubeEmulator, tmp_path: Path) -> None:
    management(mgmt)
    declare(mgmt, INSTALLED_KINDS)
    assert PEERINGS not in mgmt.resources
    result = await install(mgmt, tmp_path, "--shards", "2")
    assert result.exit_code == 0, result.output
    assert names(mgmt, "clusterkopfpeerings") == {f"tenantctl-operator-shard-{i}-of-2" for i in range(2)}
    assert "pruned" not in result.stdout


async def test_kinds_the_cluster_does_not_serve_are_refused_before_anything_is_written(
    mgmt: KubeEmulator, tmp_path: Path
) -> None:
    old_install(mgmt)
    del mgmt.resources["cert-manager.io/v1/issuers"], mgmt.resources["cert-manager.io/v1/certificates"]
    result = await install(mgmt, tmp_path, "--shards", "3", "--service-monitor")
    assert result.exit_code == 2, result.output
    refused = {line.split(": ")[0] for line in result.stderr.splitlines()}
    assert refused == {"Issuer (cert-manager.io/v1)", "Certificate (cert-manager.io/v1)",
                       "ServiceMonitor (monitoring.coreos.com/v1)", f"Deployment {NS}/tenantctl-operator"}
    assert mgmt.write_requests == []


async def test_apply_opens_every_namespace_that_holds_a_tenant_and_those_named(mgmt: KubeEmulator, tmp_path: Path
                                                                             ) -> None:
    """An upgrade with `install --apply` keeps every live tenant's namespace open to the operator, though no
    `-f` names it; `--tenant-namespace` opens one that holds none yet; nothing else is opened."""
    management(mgmt)
    declare(mgmt, INSTALLED_KINDS)
    for ns in ("tenant-live", "tenant-other"):
        mgmt.put("v1/namespaces", {"metadata": {"name": ns}})
    mgmt.put("tenantctl.io/v1alpha1/tenantclusters",
             {"apiVersion": "tenantctl.io/v1alpha1", "kind": "TenantCluster",
              "metadata": {"name": "live", "namespace": "tenant-live"}, "spec": {"substrate": "kubevirt"}})
    mgmt.put("v1/namespaces", {"metadata": {"name": "tenant-new"}})
    result = await install(mgmt, tmp_path, "--tenant-namespace", "tenant-new")
    assert result.exit_code == 0, result.output
    opened = {(b["metadata"]["namespace"], b["roleRef"]["name"], b["subjects"][0]["name"])
              for b in mgmt.live("rolebindings") if b["metadata"]["name"] == "tenantctl-operator"}
    assert opened == {("tenant-live", "tenantctl-operator-tenant", "tenantctl-operator"),
                      ("tenant-new", "tenantctl-operator-tenant", "tenantctl-operator")}


def test_a_tenant_namespace_that_is_no_namespace_name_is_refused_before_anything() -> None:
    result = CliRunner().invoke(app, ["install", "--tenant-namespace", "Bad_NS", "--tenant-namespace", "ok-ns"])
    assert result.exit_code == 2 and "--tenant-namespace 'Bad_NS'" in result.output and "ok-ns" not in result.output
