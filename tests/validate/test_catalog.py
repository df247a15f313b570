"""SchemaCatalog: CRD directories parsed once, refreshed when a file changes, conflicts refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

import tenantctl.validate as validate
from crd_support import example_crd
from tenantctl.problems import InvalidInput
from tenantctl.validate import SchemaCatalog


def test_the_public_surface() -> None:
    assert validate.__all__ == [
        "DEFAULT_KUBERNETES_VERSION", "Coverage", "SchemaCatalog", "schema_coverage", "validate_objects",
    ]


def test_crds_are_indexed_by_api_version_and_kind(widget_catalog: SchemaCatalog) -> None:
    assert widget_catalog.has("example.com/v1", "Widget")
    assert widget_catalog.has("example.com/v1beta1", "Widget")
    assert widget_catalog.has("example.com/v1", "Gadget")
    assert not widget_catalog.has("example.com/v2", "Widget")
    assert not widget_catalog.has("example.com/v1", "Kustomization")  # non-CRD documents are ignored
    assert len(widget_catalog) == 4


def test_a_directory_is_parsed_once_while_nothing_changes(widget_dir: Path) -> None:
    first = SchemaCatalog.from_dirs([widget_dir])
    assert SchemaCatalog.from_dirs([widget_dir / ".." / widget_dir.name]) is first


def test_a_changed_file_is_reloaded(widget_dir: Path) -> None:
    first = SchemaCatalog.from_dirs([widget_dir])
    crd = widget_dir / "example.com_widgets.yaml"
    crd.write_text(crd.read_text().replace("kind: Gadget", "kind: Gizmo"))
    stat = crd.stat()
    os.utime(crd, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    second = SchemaCatalog.from_dirs([widget_dir])
    assert second is not first
    assert second.has("example.com/v1", "Gizmo") and not second.has("example.com/v1", "Gadget")


def test_directories_are_read_recursively_and_combined(widget_dir: Path, tmp_path: Path) -> None:
    nested = tmp_path / "more" / "deeper"
    nested.mkdir(parents=True)
    (nested / "thing.yml").write_text(
        (widget_dir / "example.com_widgets.yaml").read_text().replace("example.com", "other.example.org")
    )
    catalog = SchemaCatalog.from_dirs([widget_dir, tmp_path / "more"])
    assert catalog.has("example.com/v1", "Widget") and catalog.has("other.example.org/v1", "Widget")
    assert catalog.dirs == (widget_dir.resolve(), (tmp_path / "more").resolve())


def test_the_same_crd_twice_is_fine_but_two_different_schemas_are_refused(widget_dir: Path, tmp_path: Path) -> None:
    copy_dir = tmp_path / "copy"
    copy_dir.mkdir()
    text = (widget_dir / "example.com_widgets.yaml").read_text()
    (copy_dir / "same.yaml").write_text(text)
    assert SchemaCatalog.from_dirs([widget_dir, copy_dir]).has("example.com/v1", "Widget")
    (copy_dir / "same.yaml").write_text(text.replace("enum: [small, large]", "enum: [small]"))
    with pytest.raises(InvalidInput) as refused:
        SchemaCatalog.from_dirs([widget_dir, copy_dir])
    assert "example.com/v1 Widget is also defined, differently, by" in str(refused.value)


def test_a_missing_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput) as refused:
        SchemaCatalog.from_dirs([tmp_path / "nope"])
    (problem,) = refused.value.problems
    assert (problem.path, problem.message) == (
        str(tmp_path / "nope"), "CRD directory does not exist (or is not a directory)")


def test_a_crd_that_names_no_scope_is_namespaced_as_the_apiserver_defaults_it(tmp_path: Path) -> None:
    from tenantctl.validate import validate_objects

    (tmp_path / "crd.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: xs.example.com}\n"
        "spec: {group: example.com, names: {kind: X, plural: xs}, versions: [{name: v1, served: true, storage: true, "
        "schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}]}\n"
    )
    catalog = SchemaCatalog.from_dirs([tmp_path])
    obj = {"apiVersion": "example.com/v1", "kind": "X", "metadata": {"name": "x", "namespace": "ns"}}
    assert validate_objects([obj], catalog) == []


def test_malformed_yaml_is_refused_with_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("kind: [unclosed\n")
    with pytest.raises(InvalidInput) as refused:
        SchemaCatalog.from_dirs([tmp_path])
    assert refused.value.problems[0].path == str((tmp_path / "bad.yaml").resolve())
    assert "cannot read CRD file" in refused.value.problems[0].message


def test_a_crd_without_a_schema_is_refused(tmp_path: Path) -> None:
    (tmp_path / "crd.yaml").write_text(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: xs.example.com}\n"
        "spec: {group: example.com, names: {kind: X}, versions: [{name: v1, served: true}]}\n"
    )
    with pytest.raises(InvalidInput, match="version v1 has no openAPIV3Schema"):
        SchemaCatalog.from_dirs([tmp_path])


def test_the_upstream_crds_load(crd_catalog: SchemaCatalog) -> None:
    for api_version, kind in [
        ("infrastructure.cluster.x-k8s.io/v1alpha1", "ProxmoxMachineTemplate"),
        ("cluster.x-k8s.io/v1beta1", "Cluster"),
        ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane"),
        ("bootstrap.cluster.x-k8s.io/v1alpha3", "TalosConfigTemplate"),
        ("cert-manager.io/v1", "Certificate"),
        ("helm.toolkit.fluxcd.io/v2", "HelmRelease"),
    ]:
        assert crd_catalog.has(api_version, kind), (api_version, kind)


def _legacy_crd(kind: str, *, listed: bool) -> str:
    """`example_crd`'s CRD as apiextensions v1beta1 wrote it: one schema in spec.validation, and a single
    `version` (or, `listed`, versions without a schema of their own)."""
    crd = yaml.safe_load(example_crd(kind, "{type: object, required: [size], properties: {size: {type: string}}}"))
    crd["apiVersion"] = "apiextensions.k8s.io/v1beta1"
    (version,) = crd["spec"].pop("versions")
    crd["spec"]["validation"] = version.pop("schema")
    crd["spec"] |= {"versions": [version]} if listed else {"version": version["name"]}
    return yaml.safe_dump(crd)


def test_a_v1beta1_crd_judges_every_version_by_its_shared_schema(tmp_path: Path) -> None:
    """apiextensions v1beta1 kept one schema for all versions in spec.validation (older providers still
    ship such files): the single `version` and each listed version without its own schema use it."""
    (tmp_path / "one.yaml").write_text(_legacy_crd("Old", listed=False))
    (tmp_path / "many.yaml").write_text(_legacy_crd("Older", listed=True))
    catalog = SchemaCatalog.from_dirs([tmp_path])
    objects = [{"apiVersion": "example.com/v1", "kind": kind, "metadata": {"name": "x", "namespace": "ns"},
                "spec": {}} for kind in ("Old", "Older")]
    problems = validate.validate_objects(objects, catalog)
    assert sorted((p.path, p.message) for p in problems) == [
        ("Old/x.spec.size", "Required value: field is missing"),
        ("Older/x.spec.size", "Required value: field is missing"),
    ]
