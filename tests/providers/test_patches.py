"""Patches as data: each operation applied, proven present, and refused when upstream moved on."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from providers.support import load_all, synthetic_components
from tenantctl.providers import patches
from tenantctl.providers.build import BuildError, build
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.manifests import ManifestError, parse_manifest
from tenantctl.providers.patches import Patch, PatchFailure

CATALOGUE = load_catalogue()
CORE = CATALOGUE.get("core")
CABPT = CATALOGUE.get("bootstrap-talos")


def docs_of(text: bytes) -> list[dict[str, Any]]:
    return load_all(text.decode())


def find(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name))


def patch(*operations: dict[str, Any], pid: str = "test") -> Patch:
    return Patch.model_validate({"id": pid, "why": "test", "operations": list(operations)})


def test_startup_probe_lands_on_the_core_manager_container() -> None:
    built = build(synthetic_components(CORE, "v1.10.1"), CORE.patches)
    manager = find(docs_of(built.components), "Deployment", "capi-controller-manager")
    [container] = manager["spec"]["template"]["spec"]["containers"]
    assert container["startupProbe"] == {
        "httpGet": {"path": "/healthz", "port": "healthz"}, "periodSeconds": 10, "failureThreshold": 30}
    assert container["livenessProbe"] == {"httpGet": {"path": "/healthz", "port": "healthz"}}


def test_cabpt_runs_as_its_own_service_account() -> None:
    docs = docs_of(build(synthetic_components(CABPT, "v0.6.12"), CABPT.patches).components)
    assert find(docs, "ServiceAccount", "cabpt-manager")["metadata"]["namespace"] == "cabpt-system"
    deployment = find(docs, "Deployment", "cabpt-controller-manager")
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == "cabpt-manager"
    for kind in ("ClusterRoleBinding", "RoleBinding"):
        assert find(docs, kind)["subjects"] == [
            {"kind": "ServiceAccount", "name": "cabpt-manager", "namespace": "cabpt-system"}]


def test_untouched_documents_keep_their_upstream_bytes() -> None:
    upstream_style = "apiVersion: v1\nkind: Namespace   # as upstream wrote it\nmetadata: {name: capi-system}\n"
    original = synthetic_components(CORE, "v1.10.1").decode().replace(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: capi-system\n", upstream_style)
    assert upstream_style in original
    patched = build(original.encode(), CORE.patches).components.decode()
    assert upstream_style in patched
    assert patched.startswith("# core v1.10.1: synthetic release for tests\n---\n")


def test_without_patches_the_file_is_unchanged() -> None:
    original = synthetic_components(CATALOGUE.get("ipam-in-cluster"), "v1.0.3")
    assert build(original, ()).components == original


@pytest.mark.parametrize("package", [CORE, CABPT], ids=lambda p: p.name)
def test_a_file_without_the_patch_is_reported_per_operation(package: Any) -> None:
    unpatched = parse_manifest(synthetic_components(package, package.version).decode())
    absent = patches.missing(unpatched, package.patches)
    assert len(absent) == sum(len(p.operations) for p in package.patches)
    assert all(a.startswith(f"{package.patches[0].id}: ") for a in absent)


def test_a_patched_file_misses_nothing() -> None:
    built = build(synthetic_components(CABPT, "v0.6.12"), CABPT.patches)
    assert patches.missing(parse_manifest(built.components.decode()), CABPT.patches) == []


def test_a_binding_left_on_the_default_account_counts_as_missing() -> None:
    text = build(synthetic_components(CABPT, "v0.6.12"), CABPT.patches).components.decode()
    text += "---\n" + yaml.safe_dump({
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "late"},
        "subjects": [{"kind": "ServiceAccount", "name": "default"},
                     {"kind": "ServiceAccount", "name": "cabpt-manager"}],
    })
    [absent] = patches.missing(parse_manifest(text), CABPT.patches)
    assert "every RoleBinding .subjects" in absent


def test_set_refuses_when_the_target_is_gone() -> None:
    text = synthetic_components(CORE, "v1.10.1").decode().replace("capi-controller-manager", "capi-manager")
    with pytest.raises(BuildError, match="patch capi-controller-manager-startup-probe: no Deployment/capi-controller"):
        build(text.encode(), CORE.patches)


def test_set_refuses_when_the_container_is_gone() -> None:
    text = synthetic_components(CORE, "v1.10.1").decode().replace("name: manager", "name: controller")
    with pytest.raises(BuildError, match=r"Deployment/capi-controller-manager has no .spec.template.spec.containers"):
        build(text.encode(), CORE.patches)


def test_replace_refuses_when_no_item_matches() -> None:
    text = synthetic_components(CABPT, "v0.6.12").decode().replace("name: default", "name: cabpt-controller")
    with pytest.raises(BuildError, match=r"no item of .subjects in every ClusterRoleBinding matches"):
        build(text.encode(), CABPT.patches)


def test_add_refuses_when_upstream_ships_a_different_object_of_that_name() -> None:
    own = {"apiVersion": "v1", "kind": "ServiceAccount",
           "metadata": {"name": "cabpt-manager", "namespace": "cabpt-system"}}
    text = synthetic_components(CABPT, "v0.6.12").decode() + yaml.safe_dump_all([own], explicit_start=True)
    with pytest.raises(BuildError, match="upstream now ships its own ServiceAccount cabpt-system/cabpt-manager"):
        build(text.encode(), CABPT.patches)


def test_add_is_a_no_op_when_upstream_ships_the_same_object() -> None:
    sa = CABPT.patches[0].operations[0].object  # type: ignore[union-attr]
    text = synthetic_components(CABPT, "v0.6.12").decode() + yaml.safe_dump_all([sa], explicit_start=True)
    docs = docs_of(build(text.encode(), CABPT.patches).components)
    assert sum(d["kind"] == "ServiceAccount" for d in docs) == 1


def test_add_keeps_upstream_objects_of_that_kind_with_other_names_or_namespaces() -> None:
    others = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "cabpt-controller",
                                                                        "namespace": "cabpt-system"}},
              {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "cabpt-manager",
                                                                        "namespace": "elsewhere"}}]
    text = synthetic_components(CABPT, "v0.6.12").decode() + yaml.safe_dump_all(others, explicit_start=True)
    docs = docs_of(build(text.encode(), CABPT.patches).components)
    accounts = sorted((d["metadata"]["namespace"], d["metadata"]["name"]) for d in docs
                      if d["kind"] == "ServiceAccount")
    assert accounts == [
        ("cabpt-system", "cabpt-controller"), ("cabpt-system", "cabpt-manager"), ("elsewhere", "cabpt-manager")]


def test_conflicting_patches_are_caught_in_the_blob() -> None:
    first = patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["metadata", "labels", "a"], "value": "1"},
                  pid="first")
    second = patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["metadata", "labels", "a"], "value": "2"},
                   pid="second")
    with pytest.raises(BuildError, match=r"patched blob does not carry: first: every Namespace .metadata.labels.a"):
        build(synthetic_components(CORE, "v1.10.1"), [first, second])


def test_set_creates_missing_mappings_on_the_way() -> None:
    label = patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["metadata", "labels", "x"], "value": "y"})
    docs = docs_of(build(synthetic_components(CORE, "v1.10.1"), [label]).components)
    assert find(docs, "Namespace")["metadata"]["labels"] == {"x": "y"}


def test_a_patch_digest_changes_with_its_definition() -> None:
    a = patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["a"], "value": 1})
    b = patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["a"], "value": 2})
    assert a.digest() != b.digest()
    assert a.digest() == patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["a"], "value": 1}).digest()


def test_a_patch_digest_ignores_the_order_its_yaml_wrote_keys_in() -> None:
    """Re-ordering a patch file's mappings is no re-pin: the digest hashes canonical JSON."""
    a = patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["a"], "value": {"x": 1, "y": 2}})
    b = patch({"value": {"y": 2, "x": 1}, "path": ["a"], "target": {"kind": "Namespace"}, "op": "set"})
    assert a.digest() == b.digest()


def test_add_tells_objects_apart_by_api_version_too() -> None:
    """An upstream object of the same kind and name in another API version is not the one added."""
    sa = CABPT.patches[0].operations[0].object  # type: ignore[union-attr]
    other = {**sa, "apiVersion": "example.com/v1"}
    text = synthetic_components(CABPT, "v0.6.12").decode() + yaml.safe_dump_all([other], explicit_start=True)
    docs = docs_of(build(text.encode(), CABPT.patches).components)
    assert sorted(d["apiVersion"] for d in docs if d["kind"] == "ServiceAccount") == ["example.com/v1", "v1"]


def test_unknown_operation_fields_are_refused() -> None:
    with pytest.raises(ValueError, match="valu"):
        patch({"op": "set", "target": {"kind": "Namespace"}, "path": ["a"], "valu": 1})


def test_malformed_components_name_the_line() -> None:
    with pytest.raises(ManifestError, match="line 5: malformed YAML"):
        parse_manifest("a: 1\n---\nb: 2\n---\nc: d: e\n")
    with pytest.raises(BuildError, match="line 3: expected a Kubernetes object, got list"):
        build(b"a: 1\n---\n- 1\n", ())
    with pytest.raises(BuildError, match="not UTF-8"):
        build(b"\xff\xfe", ())


def test_patch_failure_is_a_value_error() -> None:
    assert issubclass(PatchFailure, ValueError)
