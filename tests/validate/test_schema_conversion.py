"""The OpenAPI → JSON Schema conversion, node by node: the exact schema each Kubernetes keyword becomes.

The judge's other tests check verdicts on objects; these pin the conversion itself, so a keyword that is
dropped or mistranslated shows here even when no upstream CRD happens to use it on a rendered field.
"""

from __future__ import annotations

from typing import Any

import pytest

from tenantctl.validate.defaults import NO_DEFAULT, DefaultsTree
from tenantctl.validate.formats import GO_PATTERN_KEYWORD
from tenantctl.validate.metadata import OBJECT_META_SCHEMA
from tenantctl.validate.openapi import LIST_KEYWORD, RULES_KEYWORD, convert_crd_schema

OBJECT = {"type": "object"}


def plain(schema: Any) -> Any:
    """A converted schema with compiled rules shown as their rule text."""
    if isinstance(schema, dict):
        return {k: [r.rule for r in v] if k == RULES_KEYWORD else plain(v) for k, v in schema.items()}
    if isinstance(schema, list):
        return [plain(v) for v in schema]
    return schema


def field_schema(node: dict[str, Any]) -> Any:
    """How `node` converts as the property `f` of a CRD root."""
    root = convert_crd_schema({"type": "object", "properties": {"f": node}}).schema
    assert root["properties"].pop("metadata") is OBJECT_META_SCHEMA
    assert root == {"type": "object", "properties": {"f": root["properties"]["f"]}, "additionalProperties": False}
    return plain(root["properties"]["f"])


@pytest.mark.parametrize(
    ("node", "schema"),
    [
        # types, nullable, int-or-string
        ({"type": "string"}, {"type": "string"}),
        ({"type": "string", "nullable": True}, {"type": ["string", "null"]}),
        ({"type": "string", "nullable": False}, {"type": "string"}),
        ({"type": "string", "enum": ["a"], "nullable": True}, {"type": ["string", "null"], "enum": ["a", None]}),
        ({"type": "string", "enum": ["a", None], "nullable": True},
         {"type": ["string", "null"], "enum": ["a", None]}),
        ({"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["a"]}),
        ({"x-kubernetes-int-or-string": True}, {"type": ["integer", "string"]}),
        ({"x-kubernetes-int-or-string": True, "nullable": True}, {"type": ["integer", "string", "null"]}),
        ({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]},
         {"type": ["integer", "string"]}),
        ({"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^a"}]},
         {"type": ["integer", "string"], "anyOf": [{"type": "integer"}, {"type": "string", "pattern": "^a"}]}),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]},
         {"anyOf": [{"type": "integer"}, {"type": "string"}]}),
        ({"x-kubernetes-int-or-string": False}, {}),
        # value validations are copied as they are
        ({"type": "integer", "minimum": 1, "maximum": 9, "multipleOf": 2}, {"type": "integer", "minimum": 1,
                                                                            "maximum": 9, "multipleOf": 2}),
        ({"type": "string", "minLength": 1, "maxLength": 2, "format": "uuid"},
         {"type": "string", "minLength": 1, "maxLength": 2, "format": "uuid"}),
        ({"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True},
         {"type": "array", "minItems": 1, "maxItems": 2, "uniqueItems": True}),
        ({"type": "object", "minProperties": 1, "maxProperties": 2, "required": ["a"]},
         {"type": "object", "minProperties": 1, "maxProperties": 2, "required": ["a"], "additionalProperties": False}),
        ({"description": "words", "title": "t", "example": 1}, {}),
        # OpenAPI 3.0's boolean exclusive bounds become JSON Schema's numeric ones
        ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, {"type": "integer", "exclusiveMinimum": 1}),
        ({"type": "integer", "maximum": 9, "exclusiveMaximum": True}, {"type": "integer", "exclusiveMaximum": 9}),
        ({"type": "integer", "minimum": 1, "exclusiveMinimum": False}, {"type": "integer", "minimum": 1}),
        ({"type": "integer", "exclusiveMaximum": True}, {"type": "integer"}),
        ({"type": "number", "exclusiveMinimum": 0.5}, {"type": "number", "exclusiveMinimum": 0.5}),
        # patterns: translated, and the RE2 spelling kept beside for messages
        ({"type": "string", "pattern": "^a$"}, {"type": "string", "pattern": "^a\\Z", GO_PATTERN_KEYWORD: "^a$"}),
        ({"type": "string", "pattern": "^a"}, {"type": "string", "pattern": "^a"}),
        ({"type": "string", "pattern": 7}, {"type": "string"}),
        # objects: unknown fields refused unless the schema keeps them
        ({"type": "object", "properties": {"a": {"type": "string"}}},
         {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": False}),
        ({"properties": {"a": {}}}, {"properties": {"a": {}}, "additionalProperties": False}),
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, {"type": "object"}),
        ({"type": "object", "additionalProperties": {"type": "string"}},
         {"type": "object", "additionalProperties": {"type": "string"}}),
        ({"type": "object", "additionalProperties": True}, {"type": "object", "additionalProperties": True}),
        ({"type": "object", "additionalProperties": {"type": "object", "properties": {"b": {}}}},
         {"type": "object", "additionalProperties": {"type": "object", "properties": {"b": {}},
                                                     "additionalProperties": False}}),
        ({"type": "array", "items": {"type": "object"}},
         {"type": "array", "items": {"type": "object", "additionalProperties": False}}),
        ({"type": "array", "items": [{"type": "object"}]}, {"type": "array"}),
        # a junctor's branches constrain values, never the structure: no unknown-field refusal inside
        ({"type": "object", "oneOf": [{"properties": {"a": {}}}], "allOf": [{"required": ["a"]}]},
         {"type": "object", "allOf": [{"required": ["a"]}], "oneOf": [{"properties": {"a": {}}}],
          "additionalProperties": False}),
        ({"type": "string", "not": {"enum": ["x"]}}, {"type": "string", "not": {"enum": ["x"]}}),
        ({"type": "object", "not": {"properties": {"a": {}}}},
         {"type": "object", "not": {"properties": {"a": {}}}, "additionalProperties": False}),
        ({"type": "string", "anyOf": "nope"}, {"type": "string"}),
        # an embedded resource carries apiVersion, kind and the apiserver's ObjectMeta
        ({"type": "object", "x-kubernetes-embedded-resource": True, "x-kubernetes-preserve-unknown-fields": True},
         {"type": "object", "properties": {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                                           "metadata": OBJECT_META_SCHEMA}, "required": ["apiVersion", "kind"]}),
        ({"type": "object", "x-kubernetes-embedded-resource": True, "required": ["spec", "kind"],
          "properties": {"kind": {"type": "string", "enum": ["A"]}, "spec": OBJECT}},
         {"type": "object", "required": ["apiVersion", "kind", "spec"],
          "properties": {"kind": {"type": "string", "enum": ["A"]}, "spec": {"type": "object",
                                                                             "additionalProperties": False},
                         "apiVersion": {"type": "string"}, "metadata": OBJECT_META_SCHEMA},
          "additionalProperties": False}),
        # list types
        ({"type": "array", "x-kubernetes-list-type": "set"}, {"type": "array", LIST_KEYWORD: ("set", ())}),
        ({"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name", "port"]},
         {"type": "array", LIST_KEYWORD: ("map", ("name", "port"))}),
        ({"type": "array", "x-kubernetes-list-type": "map"}, {"type": "array", LIST_KEYWORD: ("map", ())}),
        ({"type": "array", "x-kubernetes-list-type": "atomic"}, {"type": "array"}),
        # CEL rules: compiled and kept; transition rules counted, not kept
        ({"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}, {"rule": "self == oldSelf"}]},
         {"type": "string", RULES_KEYWORD: ["self != ''"]}),
        ({"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}, {"type": "string"}),
    ],
)
def test_each_keyword_converts_to_its_json_schema(node: dict[str, Any], schema: dict[str, Any]) -> None:
    assert field_schema(node) == schema


def test_a_number_fields_rules_see_a_double_and_an_integer_fields_an_int() -> None:
    number = {"type": "number", "x-kubernetes-validations": [{"rule": "self > 0.5"}]}
    integer = {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}
    root = convert_crd_schema({"type": "object", "properties": {"n": number, "i": integer}}).schema
    (number_rule,), (integer_rule,) = root["properties"]["n"][RULES_KEYWORD], root["properties"]["i"][RULES_KEYWORD]
    assert number_rule.numeric_double and not integer_rule.numeric_double
    assert number_rule.check(1) is None


def test_rules_are_counted_and_what_does_not_compile_is_named_by_its_path() -> None:
    node = {"type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-validations": [
        {"rule": "self.a == oldSelf.a"}, {"rule": "has(self.a)"}, {"rule": "self.a ==="}]},
        "status": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]}}}
    converted = convert_crd_schema(node)
    assert (converted.rules, converted.transition_rules) == (3, 1)
    (unchecked,) = converted.unchecked
    assert unchecked.startswith("rule `self.a ===` does not compile: ") and unchecked.endswith(" (at .spec)")
    root_rule = convert_crd_schema({"type": "object", "x-kubernetes-validations": [{"rule": "self.a ==="}]})
    assert root_rule.unchecked[0].endswith(" (at .)") and root_rule.rules == 0


def test_defaults_are_collected_per_property_item_and_map_value() -> None:
    node = {"type": "object", "properties": {
        "metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}},
        "spec": {"type": "object", "default": {}, "properties": {
            "replicas": {"type": "integer", "default": 1},
            "none": {"type": "string"},
            "ports": {"type": "array", "items": {"type": "object", "properties": {"p": {"default": 80}}}},
            "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {
                "on": {"default": False}}}}}}}}
    defaults = convert_crd_schema(node).defaults
    assert defaults == DefaultsTree(properties={"spec": ({}, DefaultsTree(properties={
        "replicas": (1, None),
        "ports": (NO_DEFAULT, DefaultsTree(items=DefaultsTree(properties={"p": (80, None)}))),
        "labels": (NO_DEFAULT, DefaultsTree(additional=DefaultsTree(properties={"on": (False, None)}))),
    }))})  # the root's metadata is the apiserver's, never defaulted from the CRD
    assert convert_crd_schema({"type": "object", "properties": {"a": {"type": "string"}}}).defaults is None


def test_the_roots_metadata_is_always_the_apiservers_object_meta() -> None:
    converted = convert_crd_schema({"type": "object", "properties": {"metadata": {"type": "string"}}})
    assert converted.schema["properties"]["metadata"] is OBJECT_META_SCHEMA
    bare = convert_crd_schema({"type": "object", "x-kubernetes-preserve-unknown-fields": True}).schema
    assert bare == {"type": "object", "properties": {"metadata": OBJECT_META_SCHEMA}}
