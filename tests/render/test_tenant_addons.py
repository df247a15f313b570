"""Day-one tenant add-ons: metrics, snapshots, KubeVirt storage, optional add-ons and GPUs."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tenant_support import clone, doc, load_example
from tenantctl.problems import InvalidInput
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.render.addon_roles import ADDON_ROLES, KCSI_ROLE
from tenantctl.render.chart_sources import DEFAULT_CHART_SOURCES
from tenantctl.render.image_settings import ImagesSpec
from tenantctl.render.meta import DEFAULT_CLASS_ANNOTATION, GPU_NODE_LABEL, INGRESS_NODE_LABEL
from tenantctl.render.optional_addons import OPTIONAL_ADDONS, deep_merge, kebab
from tenantctl.spec import ADDON_NAMES, parse_observed, parse_tenant_documents
from tenantctl.spec.addons import OWNED_VALUES

Docs = list[dict[str, Any]]
Objects = list[dict[str, Any]]
Validator = Callable[[Iterable[Mapping[str, Any]]], None]
EXAMPLES = {
    "kubevirt": ("kubevirt.yaml", "observed-kubevirt.yaml"),
    "proxmox": ("proxmox.yaml", "observed-proxmox.yaml"),
}


def render(docs: Docs, substrate: str) -> Objects:
    return render_tenant(parse_tenant_documents(docs), parse_observed(load_example(EXAMPLES[substrate][1])))


def in_tenant(docs: Docs, substrate: str) -> Objects:
    tenant = parse_tenant_documents(docs)
    observed = parse_observed(load_example(EXAMPLES[substrate][1]))
    cluster = tenant.clusters[0]
    return render_tenant_bootstrap(cluster, observed[(cluster.metadata.namespace, cluster.metadata.name)])


def releases(objects: Objects) -> dict[str, dict[str, Any]]:
    return {o["metadata"]["name"]: o for o in objects if o["kind"] == "HelmRelease"}


def named(objects: Objects, kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def depends(release: dict[str, Any]) -> list[str]:
    return [d["name"] for d in release["spec"].get("dependsOn", [])]


def example(substrate: str) -> Docs:
    return clone(load_example(EXAMPLES[substrate][0]))


def cluster_name(substrate: str) -> str:
    return "demo" if substrate == "kubevirt" else "acme"


# --- always on -------------------------------------------------------------------------------------


@pytest.mark.parametrize("substrate", ["kubevirt", "proxmox"])
def test_metrics_server_after_cilium_with_a_pinned_image(substrate: str, assert_valid: Validator) -> None:
    c = cluster_name(substrate)
    rels = releases(render(example(substrate), substrate))
    ms = rels[f"{c}-metrics-server"]
    assert depends(ms) == [f"{c}-cilium"]
    values = ms["spec"]["values"]
    ref = ImagesSpec().ref("metrics-server")
    assert values["image"] == {"repository": ref.repository, "tag": ref.tag_and_digest} and ref.digest
    # Talos kubelets serve self-signed certificates (Cozystack's tenant package sets the same).
    assert "--kubelet-insecure-tls" in values["defaultArgs"]
    assert ms["spec"]["chart"]["spec"]["chart"] == "metrics-server"
    assert_valid([ms])


@pytest.mark.parametrize("substrate", ["kubevirt", "proxmox"])
def test_snapshot_crds_precede_the_controller_and_are_kept(substrate: str, assert_valid: Validator) -> None:
    c = cluster_name(substrate)
    rels = releases(render(example(substrate), substrate))
    crds, controller = rels[f"{c}-snapshot-crds"], rels[f"{c}-snapshot-controller"]
    crds_only = {"installCRDs": True, "controller": {"enabled": False}, "webhook": {"enabled": False}}
    assert crds["spec"]["values"] == crds_only
    assert depends(crds) == []
    assert depends(controller) == [f"{c}-cilium", f"{c}-snapshot-crds"]
    assert controller["spec"]["values"]["installCRDs"] is False
    patch = crds["spec"]["postRenderers"][0]["kustomize"]["patches"][0]
    assert patch["target"]["kind"] == "CustomResourceDefinition"
    assert "helm.sh/resource-policy: keep" in patch["patch"]
    assert_valid([crds, controller])


def test_kubevirt_has_a_snapshot_class_labelled_for_velero() -> None:
    controller = releases(render(example("kubevirt"), "kubevirt"))["demo-snapshot-controller"]
    (klass,) = controller["spec"]["values"]["volumeSnapshotClasses"]
    assert klass["driver"] == "csi.kubevirt.io"
    assert klass["labels"] == {"velero.io/csi-volumesnapshot-class": "true"}
    assert klass["annotations"] == {"snapshot.storage.kubernetes.io/is-default-class": "true"}


def test_proxmox_has_no_snapshot_class() -> None:
    """proxmox-csi-plugin snapshots need root@pam password credentials (its docs/volumesnapshot.md)."""
    controller = releases(render(example("proxmox"), "proxmox"))["acme-snapshot-controller"]
    assert controller["spec"]["values"]["volumeSnapshotClasses"] == []


def test_kubevirt_csi_controller_runs_the_snapshotter_with_infra_rbac() -> None:
    objects = render(example("kubevirt"), "kubevirt")
    deployment = named(objects, "Deployment", "demo-kcsi-controller")
    containers = deployment["spec"]["template"]["spec"]["containers"]
    snapshotter = next(c for c in containers if c["name"] == "csi-snapshotter")
    assert snapshotter["image"] == str(ImagesSpec().ref("csi-snapshotter"))
    binding = named(objects, "RoleBinding", "demo-kcsi-access")
    assert binding["roleRef"]["name"] == KCSI_ROLE
    assert ("snapshot.storage.k8s.io", ("volumesnapshots",), ("get", "create", "delete")) in ADDON_ROLES[KCSI_ROLE]


# --- KubeVirt storage inside the tenant ------------------------------------------------------------


def test_kubevirt_storage_objects_are_applied_in_the_tenant(assert_valid: Validator) -> None:
    objects = in_tenant(example("kubevirt"), "kubevirt")
    kinds = [o["kind"] for o in objects]
    assert kinds[kinds.index("CSIDriver"):] == [
        "CSIDriver", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet", "StorageClass",
    ]
    daemon_set = next(o for o in objects if o["kind"] == "DaemonSet")
    images = {c["name"]: c["image"] for c in daemon_set["spec"]["template"]["spec"]["containers"]}
    assert images == {
        "csi-driver": str(ImagesSpec().ref("kubevirt-csi-driver")),
        "csi-node-driver-registrar": str(ImagesSpec().ref("csi-node-driver-registrar")),
        "csi-liveness-probe": str(ImagesSpec().ref("csi-livenessprobe")),
    }
    assert all("@sha256:" in image for image in images.values())
    assert daemon_set["spec"]["template"]["spec"]["serviceAccountName"] == "kubevirt-csi-node"
    assert_valid(objects)


def test_no_kubevirt_csi_node_chart_source_remains() -> None:
    assert "kubevirt-csi-node" not in DEFAULT_CHART_SOURCES
    objects = render(example("kubevirt"), "kubevirt")
    assert "demo-csi" not in releases(objects)


def test_proxmox_applies_no_storage_objects_in_the_tenant() -> None:
    kinds = {o["kind"] for o in in_tenant(example("proxmox"), "proxmox")}
    assert not kinds & {"CSIDriver", "DaemonSet", "StorageClass"}


def test_kubevirt_storage_class_maps_to_an_infra_class() -> None:
    docs = example("kubevirt")
    doc(docs, "TenantCluster")["spec"]["kubevirt"] = {
        "storageClasses": [{"name": "fast", "infraStorageClass": "replicated"}, {"name": "bulk", "default": True}]
    }
    classes = {o["metadata"]["name"]: o for o in in_tenant(docs, "kubevirt") if o["kind"] == "StorageClass"}
    assert classes["fast"]["parameters"] == {"bus": "scsi", "infraStorageClassName": "replicated"}
    assert classes["bulk"]["parameters"] == {"bus": "scsi"}
    assert "annotations" not in classes["fast"]["metadata"]
    assert classes["bulk"]["metadata"]["annotations"] == {DEFAULT_CLASS_ANNOTATION: "true"}


# --- exactly one default StorageClass --------------------------------------------------------------

class_lists = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "d", "e", "f"]), st.booleans()),
    min_size=1, max_size=6, unique_by=lambda t: t[0],
)


def _default_classes(substrate: str, classes: list[tuple[str, bool]]) -> list[str]:
    docs = example(substrate)
    spec = doc(docs, "TenantCluster")["spec"]
    if substrate == "kubevirt":
        spec["kubevirt"] = {"storageClasses": [{"name": n, "default": d} for n, d in classes]}
        objects = [o for o in in_tenant(docs, substrate) if o["kind"] == "StorageClass"]
        marked = [(o["metadata"]["name"], o["metadata"].get("annotations", {})) for o in objects]
    else:
        spec["proxmox"]["csi"]["storageClasses"] = [
            {"name": n, "storage": "local-lvm", "default": d} for n, d in classes
        ]
        csi = releases(render(docs, substrate))["acme-csi"]
        marked = [(sc["name"], sc.get("annotations", {})) for sc in csi["spec"]["values"]["storageClass"]]
    return [name for name, annotations in marked if annotations.get(DEFAULT_CLASS_ANNOTATION) == "true"]


@pytest.mark.parametrize("substrate", ["kubevirt", "proxmox"])
@given(classes=class_lists)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_exactly_one_default_storage_class(substrate: str, classes: list[tuple[str, bool]]) -> None:
    """At most one marked: it is the default, else the first listed; more than one: refused, each named."""
    marked = [i for i, (_, d) in enumerate(classes) if d]
    if len(marked) > 1:
        with pytest.raises(InvalidInput) as refused:
            _default_classes(substrate, classes)
        paths = {p.path for p in refused.value.errors}
        base = "TenantCluster/demo.spec.kubevirt" if substrate == "kubevirt" else "TenantCluster/acme.spec.proxmox.csi"
        assert paths == {f"{base}.storageClasses[{i}].default" for i in marked}
        return
    expected = classes[marked[0]][0] if marked else classes[0][0]
    assert _default_classes(substrate, classes) == [expected]


@pytest.mark.parametrize("substrate", ["kubevirt", "proxmox"])
def test_a_tenant_without_storage_classes_is_warned(substrate: str) -> None:
    docs = example(substrate)
    spec = doc(docs, "TenantCluster")["spec"]
    if substrate == "kubevirt":
        spec["kubevirt"] = {"storageClasses": []}
    else:
        spec["proxmox"]["csi"]["storageClasses"] = []
    warnings = [w.path for w in parse_tenant_documents(docs).warnings]
    assert warnings == [f"TenantCluster/{cluster_name(substrate)}.spec." + (
        "kubevirt.storageClasses" if substrate == "kubevirt" else "proxmox.csi.storageClasses")]


# --- optional add-ons ------------------------------------------------------------------------------


def _enable(docs: Docs, *names: str, overrides: Mapping[str, Any] | None = None) -> Docs:
    doc(docs, "TenantCluster")["spec"]["addons"] = {
        n: {"enabled": True, "valuesOverride": dict((overrides or {}).get(n, {}))} for n in names
    }
    return docs


def test_add_ons_are_off_by_default() -> None:
    names = set(releases(render(example("kubevirt"), "kubevirt")))
    assert not names & {f"demo-{a.release}" for a in OPTIONAL_ADDONS}


def test_the_table_covers_every_spec_add_on() -> None:
    assert [a.name for a in OPTIONAL_ADDONS] == list(ADDON_NAMES)
    assert [a.release for a in OPTIONAL_ADDONS] == [
        "cert-manager", "ingress-nginx", "vertical-pod-autoscaler", "velero", "gpu-operator",
    ]


EXPECTED_DEPENDS = {
    "certManager": ["cilium"],
    "ingressNginx": ["cilium"],
    "verticalPodAutoscaler": ["cilium", "metrics-server"],
    "velero": ["cilium", "snapshot-controller"],
    "gpuOperator": ["cilium"],
}


@pytest.mark.parametrize("name", ADDON_NAMES)
def test_each_add_on_renders_valid_in_its_order(name: str, assert_valid: Validator) -> None:
    docs = _enable(example("kubevirt"), name)
    if name == "gpuOperator":
        doc(docs, "NodePool", "big")["spec"]["kubevirt"] = {"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/A10"}]}
    objects = render(docs, "kubevirt")
    rels = releases(objects)
    release = rels[f"demo-{kebab(name)}"]
    assert depends(release) == [f"demo-{d}" for d in EXPECTED_DEPENDS[name]]
    assert all(d in rels for d in depends(release)), "every dependency is itself rendered"
    spec = release["spec"]
    assert spec["chart"]["spec"]["chart"] == kebab(name)
    assert spec["chart"]["spec"]["sourceRef"]["name"] == f"tenantctl-{kebab(name)}"
    assert spec["install"] == releases(objects)["demo-cilium"]["spec"]["install"], "the same retry strategy"
    source = named(objects, "HelmRepository", f"tenantctl-{kebab(name)}")
    assert_valid([release, source])


@pytest.mark.parametrize("name", ADDON_NAMES)
def test_every_owned_key_is_one_tenantctl_sets(name: str) -> None:
    """A refusal guards a value tenantctl really renders; an owned path it does not set would be a lie."""
    values = next(a for a in OPTIONAL_ADDONS if a.name == name).values
    for path in OWNED_VALUES[name]:
        node: Any = values
        for part in path.split("."):
            assert isinstance(node, Mapping) and part in node, f"{name}: {path} is not in tenantctl's values"
            node = node[part]


def test_values_override_deep_merges_over_tenantctls() -> None:
    override = {"controller": {"replicaCount": 3, "service": {"type": "NodePort"}}, "extra": [1, 2]}
    docs = _enable(example("kubevirt"), "ingressNginx", overrides={"ingressNginx": override})
    values = releases(render(docs, "kubevirt"))["demo-ingress-nginx"]["spec"]["values"]
    assert values == {
        "controller": {
            "kind": "DaemonSet",
            "nodeSelector": {INGRESS_NODE_LABEL: ""},
            "replicaCount": 3,
            "service": {"type": "NodePort"},
        },
        "extra": [1, 2],
    }


def test_deep_merge_replaces_non_mappings_and_leaves_its_inputs_alone() -> None:
    base = {"a": {"b": 1, "c": [1]}, "d": 1}
    over = {"a": {"c": [2], "e": {"f": 1}}, "d": {"x": 1}}
    assert deep_merge(base, over) == {"a": {"b": 1, "c": [2], "e": {"f": 1}}, "d": {"x": 1}}
    assert base == {"a": {"b": 1, "c": [1]}, "d": 1}


def test_overrides_at_the_bounds_are_accepted() -> None:
    """The refusals (test_refusals) start one past these: 16 levels and 64 KiB are still fine."""
    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(15):
        deep = {"k": deep}
    big = {"blob": "x" * (64 * 1024 - len('{"blob":""}'))}
    for override in (deep, big):
        docs = _enable(example("kubevirt"), "velero", overrides={"velero": override})
        assert "demo-velero" in releases(render(docs, "kubevirt"))


def test_ingress_without_a_labelled_pool_is_a_warning() -> None:
    docs = _enable(example("kubevirt"), "ingressNginx")
    assert [w.path for w in parse_tenant_documents(docs).warnings] == [
        "TenantCluster/demo.spec.addons.ingressNginx.enabled"
    ]
    doc(docs, "NodePool", "md0")["spec"]["labels"] = {INGRESS_NODE_LABEL: "true"}
    assert [w.path for w in parse_tenant_documents(docs).warnings] == [
        f"NodePool/md0.spec.labels.{INGRESS_NODE_LABEL}", "TenantCluster/demo.spec.addons.ingressNginx.enabled"
    ]
    doc(docs, "NodePool", "md0")["spec"]["labels"] = {INGRESS_NODE_LABEL: ""}
    assert parse_tenant_documents(docs).warnings == ()
    objects = render(docs, "kubevirt")
    md = named(objects, "MachineDeployment", "demo-md0")
    assert md["spec"]["template"]["metadata"]["labels"][INGRESS_NODE_LABEL] == "", "CAPI copies it to the Node"


def test_gpu_operator_without_gpu_pools_is_a_warning() -> None:
    tenant = parse_tenant_documents(_enable(example("kubevirt"), "gpuOperator"))
    assert [w.path for w in tenant.warnings] == ["TenantCluster/demo.spec.addons.gpuOperator.enabled"]


# --- GPUs on KubeVirt pools ------------------------------------------------------------------------


def _templates(objects: Objects) -> dict[str, dict[str, Any]]:
    kind = "KubevirtMachineTemplate"
    return {o["metadata"]["labels"]["tenantctl.io/nodepool"]: o for o in objects if o["kind"] == kind}


def test_gpus_reach_the_vm_and_label_the_nodes() -> None:
    docs = example("kubevirt")
    before = _templates(render(docs, "kubevirt"))
    gpus = [{"name": "gpu1", "deviceName": "nvidia.com/GA102GL_A10"}, {"name": "gpu2", "deviceName": "nvidia.com/A10"}]
    doc(docs, "NodePool", "big")["spec"]["kubevirt"] = {"gpus": gpus}
    objects = render(docs, "kubevirt")
    after = _templates(objects)
    vm = after["big"]["spec"]["template"]["spec"]["virtualMachineTemplate"]["spec"]["template"]["spec"]
    assert vm["domain"]["devices"]["gpus"] == gpus
    assert after["big"]["metadata"]["name"] != before["big"]["metadata"]["name"]
    # A pool without GPUs keeps its template, name included: nothing rolls its workers.
    assert after["md0"] == before["md0"]
    md0 = after["md0"]["spec"]["template"]["spec"]["virtualMachineTemplate"]["spec"]["template"]["spec"]
    assert "gpus" not in md0["domain"]["devices"]
    import yaml

    configs = {o["metadata"]["name"]: yaml.safe_load(o["spec"]["template"]["spec"]["data"])
               for o in objects if o["kind"] == "TalosConfigTemplate"}
    assert configs["demo-big"]["machine"]["nodeLabels"][GPU_NODE_LABEL] == "true"
    assert GPU_NODE_LABEL not in configs["demo-md0"]["machine"].get("nodeLabels", {})


def test_velero_renders_no_volume_snapshot_location_and_takes_csi_snapshots() -> None:
    """velero 12.0.3's default VolumeSnapshotLocation has `provider: ""`, which the API server refuses."""
    objects = render(_enable(example("kubevirt"), "velero"), "kubevirt")
    values = releases(objects)["demo-velero"]["spec"]["values"]
    assert values["snapshotsEnabled"] is False
    assert values["configuration"]["features"] == "EnableCSI"
