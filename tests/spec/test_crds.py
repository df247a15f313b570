"""The generated CRDs: valid CustomResourceDefinitions, and they accept what the models accept."""

from __future__ import annotations

from collections.abc import Iterator
from enum import StrEnum
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from crd_support import mappings
from tenant_support import load_example
from tenantctl.spec import crd_rules
from tenantctl.spec.crds import render_crds, structural_schema
from tenantctl.validate import SchemaCatalog, validate_objects


def test_crds_pass_the_core_schema() -> None:
    assert validate_objects(render_crds()) == []


OPENAPI_TYPES = {"object", "array", "string", "integer", "number", "boolean"}


DATA_KEYS = frozenset({"default", "example", "enum"})


def _types(schema: Any) -> set[str]:
    return {node["type"] for node in mappings(schema, DATA_KEYS) if isinstance(node.get("type"), str)}


def test_every_schema_type_is_one_the_api_server_knows() -> None:
    """A structural schema's `type` is one of OpenAPI's six; the API server refuses the CRD otherwise."""
    for crd in render_crds():
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        assert _types(schema) <= OPENAPI_TYPES, crd["metadata"]["name"]


def _rules(schema: Any) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    for node in mappings(schema):
        for rule in node.get("x-kubernetes-validations", []):
            yield node, rule


def test_every_rule_field_path_names_a_property_of_its_schema() -> None:
    """The API server refuses a CRD whose rule's fieldPath is not a path of the schema the rule sits on;
    `.metadata.name` on the root included."""
    paths = set()
    for crd in render_crds():
        for schema, rule in _rules(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]):
            if "fieldPath" not in rule:
                continue
            node = schema
            for part in rule["fieldPath"].removeprefix(".").split("."):
                assert part in node.get("properties", {}), (crd["metadata"]["name"], rule["fieldPath"])
                node = node["properties"][part]
            paths.add(rule["fieldPath"])
    assert {".metadata.name", ".proxmox.allowedNodes", ".talos.version"} <= paths


def test_crds_have_status_subresource_and_printer_columns() -> None:
    for crd in render_crds():
        version = crd["spec"]["versions"][0]
        assert version["subresources"] == {"status": {}}
        assert {c["name"] for c in version["additionalPrinterColumns"]} >= {"Phase", "Age"}


@pytest.mark.parametrize("example", ["proxmox.yaml", "kubevirt.yaml"])
def test_examples_are_accepted_by_the_generated_crds(example: str, own_catalog: SchemaCatalog) -> None:
    assert validate_objects(load_example(example), own_catalog) == []


def test_generated_crds_refuse_unknown_fields(own_catalog: SchemaCatalog) -> None:
    docs = load_example("proxmox.yaml")
    docs[0]["spec"]["proxmox"]["dnsServer"] = ["192.0.2.53"]
    problems = validate_objects(docs, own_catalog)
    assert any("dnsServer" in p.path for p in problems), problems


class _Pinned(BaseModel):
    mode: Literal["fixed"]
    level: Literal[3]


def test_a_field_pinned_to_one_value_is_a_one_value_enum() -> None:
    """pydantic spells a one-value Literal as `const`; the CRD must still admit that value and no other."""
    assert structural_schema(_Pinned)[0]["properties"]["mode"] == {"type": "string", "enum": ["fixed"]}


def test_a_one_value_enum_keeps_the_type_of_its_value() -> None:
    """`{type: string, enum: [3]}` would refuse the very 3 the model accepts."""
    assert structural_schema(_Pinned)[0]["properties"]["level"] == {"type": "integer", "enum": [3]}


class _Everything(StrEnum):
    ALL = "all"


class _Surge(BaseModel):
    max_surge: _Everything | int


def test_a_union_of_a_named_string_type_and_a_number_is_int_or_string() -> None:
    """A named type in a union is a `$ref` in pydantic's schema: it is looked up, not refused as untyped."""
    properties = structural_schema(_Surge)[0]["properties"]
    assert properties["max_surge"] == {"x-kubernetes-int-or-string": True}


def test_a_cel_rule_for_a_field_no_model_has_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A renamed field must not silently shed its admission rule: generating the CRDs fails instead."""
    monkeypatch.setitem(crd_rules.FIELD_RULES, "NetworkSpec.podCidr", ({"rule": "true", "message": "x"},))
    with pytest.raises(ValueError, match=r"attached to nothing \(renamed model or field\?\): NetworkSpec.podCidr$"):
        render_crds()
