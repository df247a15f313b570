"""The proxmox storage chain (CCM → topology labels → CSI node plugin) and its KubeVirt counterpart:
every assert pins one property the issue names; mutating the line it guards turns it red."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tenant_support import EXAMPLES, clone, doc, load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant
from tenantctl.render.controller_vmid import controller_vm_id
from tenantctl.render.csi_proxmox import CONTROLLER_VMID_ANNOTATION, PROXMOX_CSI_DRIVER
from tenantctl.render.proxmox_config import CONFIG_SCRIPT
from tenantctl.spec import parse_observed, parse_tenant_documents

Docs = list[dict[str, Any]]
Objects = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]


def render(docs: Docs, observed: str | None = None) -> Objects:
    obs = parse_observed(load_example(observed)) if observed else None
    return render_tenant(parse_tenant_documents(docs), obs)


def proxmox(docs: Docs) -> Objects:
    return render(docs, "observed-proxmox.yaml")


def kubevirt(docs: Docs) -> Objects:
    return render(docs, "observed-kubevirt.yaml")


def named(objects: Objects, kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def names(objects: Objects, kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in objects if o["kind"] == kind]


def pod(deployment: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = deployment["spec"]["template"]["spec"]
    return spec


def env(deployment: dict[str, Any]) -> dict[str, str]:
    (init,) = pod(deployment)["initContainers"]
    return {e["name"]: e["value"] for e in init["env"]}


def features(deployment: dict[str, Any]) -> dict[str, Any]:
    parsed: dict[str, Any] = yaml.safe_load(env(deployment)["PVE_FEATURES"])["features"]
    return parsed


def args(deployment: dict[str, Any], container: str) -> list[str]:
    c = next(c for c in pod(deployment)["containers"] if c["name"] == container)
    result: list[str] = c["args"]
    return result


def volume(deployment: dict[str, Any], name: str) -> dict[str, Any]:
    return next(v for v in pod(deployment)["volumes"] if v["name"] == name)


def px(docs: Docs) -> dict[str, Any]:
    spec: dict[str, Any] = doc(docs, "TenantCluster")["spec"]["proxmox"]
    return spec


# --- CCM -------------------------------------------------------------------------------------------


def test_ccm_runs_in_capmox_mode_against_the_tenant(proxmox_docs: Docs) -> None:
    ccm = named(proxmox(proxmox_docs), "Deployment", "acme-pccm")
    assert ccm["metadata"]["namespace"] == "tenant-acme"
    assert features(ccm) == {"provider": "capmox"}
    assert "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc" in args(ccm, "cloud-controller-manager")
    assert volume(ccm, "kubeconfig") == {"name": "kubeconfig", "secret": {"secretName": "acme-admin-kubeconfig"}}


def test_ccm_tolerates_exactly_two_taints(proxmox_docs: Docs) -> None:
    ccm = named(proxmox(proxmox_docs), "Deployment", "acme-pccm")
    assert pod(ccm)["tolerations"] == [
        {"key": "CriticalAddonsOnly", "operator": "Exists"},
        {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"},
    ]


def test_ccm_runs_only_the_node_controllers_and_installs_no_rbac(proxmox_docs: Docs) -> None:
    objects = proxmox(proxmox_docs)
    ccm = named(objects, "Deployment", "acme-pccm")
    assert "--controllers=cloud-node,cloud-node-lifecycle" in args(ccm, "cloud-controller-manager")
    assert pod(ccm)["automountServiceAccountToken"] is False
    assert not [n for n in names(objects, "Role") + names(objects, "ClusterRole") if "pccm" in n]


def test_ccm_is_rendered_without_observed_inputs(proxmox_docs: Docs) -> None:
    assert named(render(proxmox_docs), "Deployment", "acme-pccm")


# --- credentials -----------------------------------------------------------------------------------


def test_each_controller_names_its_own_secret_in_a_memory_backed_config(proxmox_docs: Docs) -> None:
    objects = proxmox(proxmox_docs)
    for deployment, secret in (("acme-pccm", "pve-ccm-acme"), ("acme-pcsi-controller", "pve-csi-acme")):
        d = named(objects, "Deployment", deployment)
        assert volume(d, "proxmox-credentials")["secret"] == {"secretName": secret}
        assert volume(d, "proxmox-config")["emptyDir"]["medium"] == "Memory"
        (init,) = pod(d)["initContainers"]
        assert init["args"] == ["-c", CONFIG_SCRIPT]
        mounts = {m["name"]: m for m in init["volumeMounts"]}
        assert mounts["proxmox-credentials"]["readOnly"] is True
        main = pod(d)["containers"][0]
        assert "proxmox-credentials" not in {m["name"] for m in main["volumeMounts"]}


@pytest.mark.parametrize("insecure", [True, False])
def test_insecure_flows_into_both_configs(proxmox_docs: Docs, insecure: bool) -> None:
    px(proxmox_docs)["insecure"] = insecure
    objects = proxmox(proxmox_docs)
    for deployment in ("acme-pccm", "acme-pcsi-controller"):
        assert env(named(objects, "Deployment", deployment))["PVE_INSECURE"] == str(insecure).lower()


def test_insecure_defaults_to_false(proxmox_docs: Docs) -> None:
    px(proxmox_docs).pop("insecure")
    assert env(named(proxmox(proxmox_docs), "Deployment", "acme-pccm"))["PVE_INSECURE"] == "false"


# --- CSI controller --------------------------------------------------------------------------------


def test_csi_controller_runs_here_with_kubeconfig_and_its_vmid(proxmox_docs: Docs) -> None:
    csi = named(proxmox(proxmox_docs), "Deployment", "acme-pcsi-controller")
    vmid = controller_vm_id("tenant-acme", "acme")
    assert csi["metadata"]["annotations"] == {CONTROLLER_VMID_ANNOTATION: str(vmid)}
    assert features(csi) == {"controllerVmID": vmid}
    for container in ("csi-driver", "csi-attacher", "csi-provisioner", "csi-resizer"):
        assert "--kubeconfig=/etc/kubernetes/kubeconfig/super-admin.svc" in args(csi, container)


def test_csi_controller_leaves_features_provider_unset(proxmox_docs: Docs) -> None:
    csi = named(proxmox(proxmox_docs), "Deployment", "acme-pcsi-controller")
    assert "provider" not in features(csi)


def test_two_tenants_clusters_with_one_name_get_different_vmids(proxmox_docs: Docs) -> None:
    other = clone(proxmox_docs)
    for d in other:
        d["metadata"]["namespace"] = "tenant-other"
    a = named(proxmox(proxmox_docs), "Deployment", "acme-pcsi-controller")
    b = named(render(other), "Deployment", "acme-pcsi-controller")
    assert a["metadata"]["annotations"] != b["metadata"]["annotations"]


# --- tenant CSI release ----------------------------------------------------------------------------


def test_tenant_csi_release_is_the_node_plugin_only(proxmox_docs: Docs) -> None:
    release = named(proxmox(proxmox_docs), "HelmRelease", "acme-csi")
    spec = release["spec"]
    assert spec["kubeConfig"] == {"secretRef": {"name": "acme-admin-kubeconfig", "key": "super-admin.svc"}}
    assert spec["values"]["replicaCount"] == 0
    assert spec["values"]["config"] == {"clusters": []}
    assert "valuesFrom" not in spec
    assert spec["dependsOn"] == [{"name": "acme-cilium", "namespace": "tenant-acme"}]


def test_tenant_csi_release_patches_storage_capacity_off(proxmox_docs: Docs) -> None:
    (renderer,) = named(proxmox(proxmox_docs), "HelmRelease", "acme-csi")["spec"]["postRenderers"]
    (patch,) = renderer["kustomize"]["patches"]
    target = {"group": "storage.k8s.io", "version": "v1", "kind": "CSIDriver", "name": PROXMOX_CSI_DRIVER}
    assert patch["target"] == target
    assert yaml.safe_load(patch["patch"]) == [{"op": "replace", "path": "/spec/storageCapacity", "value": False}]


def test_storage_classes_come_from_the_spec(proxmox_docs: Docs) -> None:
    px(proxmox_docs)["csi"]["storageClasses"] = [
        {"name": "fast", "storage": "nvme", "default": True, "reclaimPolicy": "Retain", "fstype": "xfs"},
        {"name": "slow", "storage": "hdd"},
    ]
    classes = named(proxmox(proxmox_docs), "HelmRelease", "acme-csi")["spec"]["values"]["storageClass"]
    assert classes == [
        {
            "name": "fast", "storage": "nvme", "reclaimPolicy": "Retain", "fstype": "xfs",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "true"},
        },
        {"name": "slow", "storage": "hdd", "reclaimPolicy": "Delete", "fstype": "ext4"},
    ]


def test_csi_disabled_renders_no_controller_no_release_and_needs_no_token(proxmox_docs: Docs) -> None:
    px(proxmox_docs)["csi"] = {"enabled": False}
    objects = proxmox(proxmox_docs)
    assert "acme-pcsi-controller" not in names(objects, "Deployment")
    assert "acme-pcsi" not in names(objects, "ServiceAccount")
    assert "acme-csi" not in names(objects, "HelmRelease")
    assert "acme-pccm" in names(objects, "Deployment")


# --- substrates ------------------------------------------------------------------------------------


def test_proxmox_renders_no_kubevirt_controllers(proxmox_docs: Docs) -> None:
    deployments = names(proxmox(proxmox_docs), "Deployment")
    assert deployments == ["acme-pccm", "acme-pcsi-controller"]


def test_kubevirt_renders_kccm_and_kubevirt_csi_and_no_proxmox_controllers(kubevirt_docs: Docs) -> None:
    objects = kubevirt(kubevirt_docs)
    # The example's autoscaled pool adds the cluster-autoscaler (tests/render/test_autoscaler.py).
    assert names(objects, "Deployment") == ["demo-kccm", "demo-kcsi-controller", "demo-cluster-autoscaler"]
    assert names(objects, "ConfigMap") == ["demo-cloud-config"]
    assert names(objects, "Role") == [] and names(objects, "ClusterRole") == []
    assert names(objects, "RoleBinding") == ["demo-kccm-access", "demo-kcsi-access", "demo-cluster-autoscaler-access"]
    assert names(objects, "ClusterRoleBinding") == ["tenant-demo-demo-kcsi-access"]
    csi = named(objects, "Deployment", "demo-kcsi-controller")
    driver = args(csi, "csi-driver")
    assert "--run-node-service=false" in driver
    assert "--infra-cluster-namespace=tenant-demo" in driver
    assert "--infra-cluster-labels=cluster.x-k8s.io/cluster-name=demo" in driver
    assert pod(csi)["automountServiceAccountToken"] is True
    config = yaml.safe_load(named(objects, "ConfigMap", "demo-cloud-config")["data"]["cloud-config"])
    assert config["namespace"] == "tenant-demo"
    assert config["infraLabels"] == {"cluster.x-k8s.io/cluster-name": "demo"}
    assert "demo-csi" not in names(objects, "HelmRelease"), "the node plugin is applied in the tenant, no chart"


# --- add-ons ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("example", "observed", "host"), [
    ("proxmox.yaml", "observed-proxmox.yaml", "192.0.2.10"),
    ("kubevirt.yaml", "observed-kubevirt.yaml", "10.96.12.34"),
])
def test_cilium_talks_to_the_apiserver_address(example: str, observed: str, host: str) -> None:
    objects = render(load_example(example), observed)
    cilium = next(o for o in objects if o["kind"] == "HelmRelease" and o["metadata"]["name"].endswith("-cilium"))
    assert cilium["spec"]["values"]["k8sServiceHost"] == host
    assert cilium["spec"]["values"]["k8sServicePort"] == 6443
    assert "dependsOn" not in cilium["spec"]


def test_coredns_takes_the_tenth_service_address_and_waits_for_cilium(proxmox_docs: Docs) -> None:
    doc(proxmox_docs, "TenantCluster")["spec"]["network"]["serviceCIDR"] = "10.200.0.0/20"
    coredns = named(proxmox(proxmox_docs), "HelmRelease", "acme-coredns")
    assert coredns["spec"]["values"]["service"]["clusterIP"] == "10.200.0.10"
    assert coredns["spec"]["dependsOn"] == [{"name": "acme-cilium", "namespace": "tenant-acme"}]


def test_add_ons_wait_for_the_observed_apiserver_address(proxmox_docs: Docs) -> None:
    assert names(render(proxmox_docs), "HelmRelease") == []
    assert names(proxmox(proxmox_docs), "HelmRelease") == [
        "acme-cilium", "acme-coredns", "acme-csi", "acme-metrics-server", "acme-snapshot-crds",
        "acme-snapshot-controller",
    ]


# --- validity --------------------------------------------------------------------------------------


def _csi_off(docs: Docs) -> None:
    px(docs)["csi"] = {"enabled": False}


def _insecure(docs: Docs) -> None:
    px(docs)["insecure"] = True


@pytest.mark.parametrize(("example", "observed", "mutate"), [
    ("proxmox.yaml", None, None),
    ("proxmox.yaml", "observed-proxmox.yaml", None),
    ("proxmox.yaml", "observed-proxmox.yaml", _csi_off),
    ("proxmox.yaml", "observed-proxmox.yaml", _insecure),
    ("kubevirt.yaml", None, None),
    ("kubevirt.yaml", "observed-kubevirt.yaml", None),
])
def test_renders_are_valid_against_crds_and_core_schemas(
    example: str, observed: str | None, mutate: Callable[[Docs], None] | None, assert_valid: Validator
) -> None:
    docs = load_example(example)
    if mutate is not None:
        mutate(docs)
    objects = render(docs, observed)
    # Another room's memoryMiB rounding is judged by its own tests; this file judges what it added.
    assert_valid(o for o in objects if o["kind"] != "ProxmoxMachineTemplate")


# --- from the CLI ----------------------------------------------------------------------------------


def _cli(docs: Docs, tmp_path: Any, *extra: str) -> Any:
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, ["render", "-f", str(spec), *extra])


def test_cli_csi_disabled_without_csi_credentials_renders(proxmox_docs: Docs, tmp_path: Any) -> None:
    px(proxmox_docs)["csi"] = {"enabled": False}
    result = _cli(proxmox_docs, tmp_path, "--observed", str(EXAMPLES / "observed-proxmox.yaml"))
    assert result.exit_code == 0, result.stderr
    rendered = list(yaml.safe_load_all(result.stdout))
    assert "acme-csi" not in names(rendered, "HelmRelease")
    assert "pve-csi-acme" not in result.stdout


def test_cli_refuses_a_missing_ccm_credentials_name(proxmox_docs: Docs, tmp_path: Any) -> None:
    px(proxmox_docs)["ccm"] = {}
    result = _cli(proxmox_docs, tmp_path)
    assert result.exit_code == 2
    assert "TenantCluster/acme.spec.proxmox.ccm.credentialsSecretName: required on substrate proxmox" in result.stderr
    assert result.stdout == ""


def test_cli_refuses_a_missing_csi_credentials_name_while_enabled(proxmox_docs: Docs, tmp_path: Any) -> None:
    px(proxmox_docs)["csi"].pop("credentialsSecretName")
    result = _cli(proxmox_docs, tmp_path)
    assert result.exit_code == 2
    assert "TenantCluster/acme.spec.proxmox.csi.credentialsSecretName: required while" in result.stderr


def test_cli_csi_is_enabled_by_default_so_its_credentials_are_required(proxmox_docs: Docs, tmp_path: Any) -> None:
    px(proxmox_docs).pop("csi")
    result = _cli(proxmox_docs, tmp_path)
    assert result.exit_code == 2
    assert "spec.proxmox.csi.credentialsSecretName: required while" in result.stderr


@pytest.mark.parametrize(("example", "observed"), [
    ("proxmox.yaml", "observed-proxmox.yaml"), ("kubevirt.yaml", "observed-kubevirt.yaml"),
])
def test_renders_are_deterministic_and_share_no_state(example: str, observed: str) -> None:
    """Mutating one render's objects (as an apply pipeline may) must not change the next render."""
    first = render(load_example(example), observed)
    pristine = yaml.safe_dump_all(first)
    _scribble(first)
    assert yaml.safe_dump_all(render(load_example(example), observed)) == pristine


def _scribble(value: Any) -> None:
    """Add a key to every mapping and an item to every list, all the way down."""
    if isinstance(value, dict):
        for item in list(value.values()):
            _scribble(item)
        value["scribbled"] = True
    elif isinstance(value, list):
        for item in list(value):
            _scribble(item)
        value.append("scribbled")
