"""Worker parity with the production chart: kubelet eviction, pool labels and taints, health-check
timeouts and the management cluster's domain. Each assert pins one rendered line."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
import yaml

from tenant_support import clone, doc, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def render(docs: Docs, observed: str | Docs | None = None) -> list[dict[str, Any]]:
    obs = load_example(observed) if isinstance(observed, str) else observed
    return render_tenant(parse_tenant_documents(docs), parse_observed(obs) if obs else None)


def by_pool(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["labels"]["tenantctl.io/nodepool"]: o for o in objects if o["kind"] == kind}


def worker_config(objects: list[dict[str, Any]], pool: str) -> dict[str, Any]:
    tct = by_pool(objects, "TalosConfigTemplate")[pool]
    config: dict[str, Any] = yaml.safe_load(tct["spec"]["template"]["spec"]["data"])
    return config


def one(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [o for o in objects if o["kind"] == kind]
    return found


# --- kubelet eviction -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("example", "observed"), [("kubevirt.yaml", "observed-kubevirt.yaml"),
                                                   ("proxmox.yaml", "observed-proxmox.yaml")])
def test_worker_kubelet_eviction_hard_and_soft(example: str, observed: str) -> None:
    extra = worker_config(render(load_example(example), observed), "md0")["machine"]["kubelet"]["extraConfig"]
    assert extra["evictionHard"] == {
        "memory.available": "7%",
        "nodefs.available": "10%",
        "imagefs.available": "15%",
        "nodefs.inodesFree": "5%",
    }
    assert extra["evictionSoft"] == {"memory.available": "10%", "nodefs.available": "15%", "imagefs.available": "20%"}
    assert extra["evictionSoftGracePeriod"] == {
        "memory.available": "1m30s",
        "nodefs.available": "1m30s",
        "imagefs.available": "1m30s",
    }
    assert extra["evictionMinimumReclaim"] == {"memory.available": "256Mi"}


def test_every_soft_threshold_has_a_grace_period_and_sits_above_its_hard_one() -> None:
    from tenantctl.render.sizing import EVICTION

    for signal, t in EVICTION.items():
        assert (t.soft is None) == (t.grace is None), signal
        if t.soft is not None:
            assert float(t.soft.rstrip("%")) > float(t.hard.rstrip("%")), signal


# --- pool labels and taints -------------------------------------------------------------------------------


def test_role_labels_go_through_capi_and_others_through_talos(kubevirt_docs: Docs) -> None:
    objects = render(kubevirt_docs, "observed-kubevirt.yaml")
    md = {o["metadata"]["name"]: o for o in objects if o["kind"] == "MachineDeployment"}["demo-big"]
    assert md["spec"]["template"]["metadata"]["labels"] == {
        "node-role.kubernetes.io/memory": "",
        "cluster.x-k8s.io/cluster-name": "demo",
        "tenantctl.io/nodepool": "big",
    }
    selector = {"cluster.x-k8s.io/cluster-name": "demo", "tenantctl.io/nodepool": "big"}
    assert md["spec"]["selector"]["matchLabels"] == selector
    machine = worker_config(objects, "big")["machine"]
    assert machine["nodeLabels"] == {"example.com/workload": "memory-heavy"}


def test_taints_are_registered_by_the_kubelet_not_patched_by_talos(kubevirt_docs: Docs) -> None:
    machine = worker_config(render(kubevirt_docs, "observed-kubevirt.yaml"), "big")["machine"]
    assert machine["kubelet"]["extraConfig"]["registerWithTaints"] == [
        {"key": "example.com/workload", "value": "memory-heavy", "effect": "NoSchedule"}
    ]
    assert "nodeTaints" not in machine


def test_an_empty_taint_value_is_left_out(kubevirt_docs: Docs) -> None:
    doc(kubevirt_docs, "NodePool", "big")["spec"]["taints"] = [{"key": "example.com/gpu", "effect": "NoExecute"}]
    machine = worker_config(render(kubevirt_docs, "observed-kubevirt.yaml"), "big")["machine"]
    taints = machine["kubelet"]["extraConfig"]["registerWithTaints"]
    assert taints == [{"key": "example.com/gpu", "effect": "NoExecute"}]


def test_node_restriction_and_capi_node_domains_are_synced_by_capi(kubevirt_docs: Docs) -> None:
    doc(kubevirt_docs, "NodePool", "big")["spec"]["labels"] = {
        "node-restriction.kubernetes.io/tenant": "acme",
        "a.node-restriction.kubernetes.io/x": "y",
        "node.cluster.x-k8s.io/rack": "r1",
        "team": "db",
    }
    objects = render(kubevirt_docs, "observed-kubevirt.yaml")
    md = {o["metadata"]["name"]: o for o in objects if o["kind"] == "MachineDeployment"}["demo-big"]
    labels = md["spec"]["template"]["metadata"]["labels"]
    assert {k: v for k, v in labels.items() if "cluster-name" not in k and "nodepool" not in k} == {
        "node-restriction.kubernetes.io/tenant": "acme",
        "a.node-restriction.kubernetes.io/x": "y",
        "node.cluster.x-k8s.io/rack": "r1",
    }
    assert worker_config(objects, "big")["machine"]["nodeLabels"] == {"team": "db"}


def test_a_pool_without_labels_or_taints_renders_no_keys_for_them(kubevirt_docs: Docs) -> None:
    objects = render(kubevirt_docs, "observed-kubevirt.yaml")
    machine = worker_config(objects, "md0")["machine"]
    assert "nodeLabels" not in machine and "registerWithTaints" not in machine["kubelet"]["extraConfig"]


def test_labels_and_taints_change_no_other_pool_and_no_machine_template(kubevirt_docs: Docs) -> None:
    plain = clone(kubevirt_docs)
    for field in ("labels", "taints"):
        doc(plain, "NodePool", "big")["spec"].pop(field)
    before, after = render(plain, "observed-kubevirt.yaml"), render(kubevirt_docs, "observed-kubevirt.yaml")
    for kind in ("KubevirtMachineTemplate", "TalosConfigTemplate", "MachineDeployment", "MachineHealthCheck"):
        assert by_pool(before, kind)["md0"] == by_pool(after, kind)["md0"], kind
    kmt = "KubevirtMachineTemplate"
    assert by_pool(before, kmt)["big"]["metadata"]["name"] == by_pool(after, kmt)["big"]["metadata"]["name"]


def test_labels_and_taints_validate_against_the_crds(kubevirt_docs: Docs, assert_valid: Validator) -> None:
    doc(kubevirt_docs, "NodePool", "md0")["spec"].update(
        labels={"node-role.kubernetes.io/infra": "", "example.com/tier": "gold"},
        taints=[{"key": "node-role.kubernetes.io/infra", "effect": "PreferNoSchedule"}],
    )
    assert_valid(render(kubevirt_docs, "observed-kubevirt.yaml"))


def test_node_labels_and_taints_for_reuse() -> None:
    from tenantctl.render.node_placement import node_labels, node_taints

    pool = parse_tenant_documents(load_example("kubevirt.yaml")).pools[1]
    assert node_labels(pool) == {"example.com/workload": "memory-heavy", "node-role.kubernetes.io/memory": ""}
    assert node_taints(pool) == [{"key": "example.com/workload", "value": "memory-heavy", "effect": "NoSchedule"}]


# --- MachineHealthCheck timeouts ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "rendered"),
    [("20m0s", "20m0s"), ("1200s", "20m0s"), ("1h30m", "1h30m0s"), ("90s", "1m30s"), ("1.5h", "1h30m0s"),
     ("2h", "2h0m0s"), ("45s", "45s")],
)
def test_health_check_timeouts_are_go_durations_rendered_as_capi_stores_them(
    proxmox_docs: Docs, given: str, rendered: str
) -> None:
    doc(proxmox_docs, "NodePool")["spec"]["healthCheck"] = {
        "nodeStartupTimeout": given, "readyUnknownTimeout": given, "readyFalseTimeout": given,
    }
    mhc = one(render(proxmox_docs), "MachineHealthCheck")["spec"]
    assert mhc["nodeStartupTimeout"] == rendered
    assert [c["timeout"] for c in mhc["unhealthyConditions"]] == [rendered, rendered]


@pytest.mark.parametrize(("given", "rendered"), [(3, 3), ("3", 3), ("0", 0), ("40%", "40%"), ("100%", "100%")])
def test_max_unhealthy_count_or_percent(proxmox_docs: Docs, given: Any, rendered: Any) -> None:
    doc(proxmox_docs, "NodePool")["spec"]["healthCheck"] = {"maxUnhealthy": given}
    assert one(render(proxmox_docs), "MachineHealthCheck")["spec"]["maxUnhealthy"] == rendered


# --- the management cluster's DNS domain -------------------------------------------------------------------


def test_an_observed_management_domain_replaces_cluster_local_everywhere(kubevirt_docs: Docs) -> None:
    """The tenant's own clusterDomain stays cluster.local; nothing of the management side may."""
    observed = load_example("observed-kubevirt.yaml")
    observed[0]["managementClusterDomain"] = "mgmt.example"
    objects = render(kubevirt_docs, observed)
    sans = one(objects, "KamajiControlPlane")["spec"]["network"]["certSANs"]
    assert "demo.tenant-demo.svc.mgmt.example" in sans
    config = worker_config(objects, "md0")
    network = config["machine"]["network"]
    assert network["searchDomains"] == ["svc.mgmt.example", "mgmt.example"]
    (host,) = network["extraHostEntries"]
    assert host["aliases"] == ["demo.tenant-demo.svc", "demo.tenant-demo.svc.mgmt.example"]
    assert config["cluster"]["controlPlane"]["endpoint"] == "https://demo.tenant-demo.svc:6443"
    assert config["cluster"]["network"]["dnsDomain"] == "cluster.local"
    for where in (sans, network, config["cluster"]["controlPlane"]):
        assert "cluster.local" not in yaml.safe_dump(where), where
    (talos_tls,) = [o for o in objects if o["kind"] == "Certificate" and "dnsNames" in o["spec"]]
    assert talos_tls["spec"]["dnsNames"] == ["demo.tenant-demo.svc", "demo.tenant-demo.svc.mgmt.example"]


def test_with_both_domains_set_no_cluster_local_is_left_anywhere(kubevirt_docs: Docs) -> None:
    from tenantctl.documents import dump_objects

    doc(kubevirt_docs, "TenantCluster")["spec"]["network"] = {"clusterDomain": "tenant.example"}
    observed = load_example("observed-kubevirt.yaml")
    observed[0]["managementClusterDomain"] = "mgmt.example"
    assert "cluster.local" not in dump_objects(render(kubevirt_docs, observed))
