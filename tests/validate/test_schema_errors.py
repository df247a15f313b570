"""jsonschema's errors retold as Problems: the exact words and field path for each keyword that fails.

The judge corpus pins verdicts on real CRDs; this pins the wording table itself, including keywords no
rendered field reaches today (patternProperties in core schemas, const, multipleOf, size bounds).
"""

from __future__ import annotations

from typing import Any

import pytest
from jsonschema import Draft202012Validator  # type: ignore[import-untyped]

from tenantctl.problems import Problem
from tenantctl.validate.formats import GO_PATTERN_KEYWORD, KUBERNETES_FORMATS
from tenantctl.validate.schema_errors import problems_from_errors


def told(schema: dict[str, Any], value: Any) -> list[tuple[str, str]]:
    validator = Draft202012Validator(schema, format_checker=KUBERNETES_FORMATS)
    return [(p.path, p.message) for p in problems_from_errors("Widget/w", validator.iter_errors(value))]


def at_f(schema: dict[str, Any], value: Any) -> list[str]:
    """The messages for `value` as the field `f` of an object."""
    problems = told({"type": "object", "properties": {"f": schema}}, {"f": value})
    assert {path for path, _ in problems} <= {"Widget/w.f"}, problems
    return [message for _, message in problems]


@pytest.mark.parametrize(
    ("schema", "value", "message"),
    [
        ({"type": "string"}, 3, "Invalid value: 3: must be string, not integer"),
        ({"type": "integer"}, True, "Invalid value: true: must be integer, not boolean"),
        ({"type": "integer"}, 1.5, "Invalid value: 1.5: must be integer, not number"),
        ({"type": "object"}, [], "Invalid value: []: must be object, not array"),
        ({"type": "array"}, {}, "Invalid value: {}: must be array, not object"),
        ({"type": "boolean"}, "x", 'Invalid value: "x": must be boolean, not string'),
        ({"type": ["integer", "string"]}, [1], "Invalid value: [1]: must be integer or string, not array"),
        ({"type": "string"}, None,
         "Invalid value: null: must be string (the field is not nullable; omit it instead)"),
        ({"type": ["integer", "string"]}, None,
         "Invalid value: null: must be integer or string (the field is not nullable; omit it instead)"),
        ({"enum": ["a", 1]}, "b", 'Unsupported value: "b"; supported values: "a", 1'),
        ({"const": "a"}, "b", 'Unsupported value: "b"; must be "a"'),
        ({"pattern": "^a\\Z", GO_PATTERN_KEYWORD: "^a$"}, "b",
         'Invalid value: "b": must match the regular expression ^a$'),
        ({"pattern": "^a"}, "b", 'Invalid value: "b": must match the regular expression ^a'),
        ({"format": "uuid"}, "x", 'Invalid value: "x": not a valid uuid (badly formed hexadecimal UUID string)'),
        ({"minimum": 2}, 1, "Invalid value: 1: must be >= 2"),
        ({"maximum": 2}, 3, "Invalid value: 3: must be <= 2"),
        ({"exclusiveMinimum": 2}, 2, "Invalid value: 2: must be > 2"),
        ({"exclusiveMaximum": 2}, 2, "Invalid value: 2: must be < 2"),
        ({"minLength": 3}, "ab", 'too short: 2, must have at least 3 characters ("ab")'),
        ({"maxLength": 1}, "ab", 'too long: 2, must have at most 1 characters ("ab")'),
        ({"minItems": 2}, [1], "too few items: 1, must have at least 2 items ([1])"),
        ({"maxItems": 1}, [1, 2], "too many items: 2, must have at most 1 items ([1, 2])"),
        ({"minProperties": 2}, {"a": 1}, 'too few properties: 1, must have at least 2 properties ({"a": 1})'),
        ({"maxProperties": 0}, {"a": 1}, 'too many properties: 1, must have at most 0 properties ({"a": 1})'),
        ({"multipleOf": 3}, 4, "Invalid value: 4: must be a multiple of 3"),
        ({"uniqueItems": True}, [1, 1], "Duplicate value: items must be unique ([1, 1])"),
        ({"not": {"type": "string"}}, "a", "Invalid value: \"a\": 'a' should not be valid under {'type': 'string'}"),
    ],
)
def test_each_keyword_is_told_with_the_value(schema: dict[str, Any], value: Any, message: str) -> None:
    assert at_f(schema, value) == [message]


def test_a_format_refusal_gives_its_cause_when_the_checker_names_one() -> None:
    (message,) = at_f({"format": "date-time"}, "2026-13-01T00:00:00Z")
    assert message.startswith('Invalid value: "2026-13-01T00:00:00Z": not a valid date-time')


def test_any_of_and_one_of_say_which_and_the_closest_branch() -> None:
    branches = [{"type": "integer"}, {"type": "string", "pattern": "^a"}]
    assert at_f({"anyOf": branches}, "b") == [
        'Invalid value: "b": must match any of the allowed forms; closest: \'b\' is not of type \'integer\'']
    assert at_f({"oneOf": [{"type": "string"}, {"type": "string"}]}, "b") == [
        'Invalid value: "b": must match exactly one of the allowed forms']


def test_a_missing_required_field_is_told_at_the_field_each_once() -> None:
    assert told({"type": "object", "required": ["b", "a"]}, {"a": 1}) == [
        ("Widget/w.b", "Required value: field is missing")]
    assert told({"type": "object", "required": ["a", "b"]}, {}) == [
        ("Widget/w.a", "Required value: field is missing"), ("Widget/w.b", "Required value: field is missing")]
    assert told({"required": ["a"]}, "not an object") == []


def test_unknown_fields_are_told_one_by_one_with_the_closest_known_name() -> None:
    schema = {"type": "object", "properties": {"replicas": {}, "image": {}}, "additionalProperties": False}
    assert told(schema, {"replica": 1, "zzz": 2, "image": "x"}) == [
        ("Widget/w.replica", "unknown field 'replica'; did you mean 'replicas'? (known fields: image, replicas)"),
        ("Widget/w.zzz", "unknown field 'zzz' (known fields: image, replicas)"),
    ]
    assert told({"type": "object", "additionalProperties": False}, {"a": 1}) == [
        ("Widget/w.a", "unknown field 'a': this object allows no fields")]


def test_a_long_list_of_known_fields_is_cut_after_twelve() -> None:
    names = [f"field{i:02d}" for i in range(13)]
    schema = {"type": "object", "properties": {n: {} for n in names}, "additionalProperties": False}
    ((_, message),) = told(schema, {"other": 1})
    assert message == f"unknown field 'other' (known fields: {', '.join(names[:12])}, …)"
    ((_, message),) = told({**schema, "properties": {n: {} for n in names[:12]}}, {"other": 1})
    assert message.endswith(f"(known fields: {', '.join(names[:12])})")


def test_keys_a_pattern_property_allows_are_not_unknown() -> None:
    schema = {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x-": {}},
              "additionalProperties": False}
    assert told(schema, {"a": 1, "x-extra": 2, "y": 3}) == [
        ("Widget/w.y", "unknown field 'y' (known fields: a)")]


def test_additional_properties_with_a_schema_is_told_as_any_other_value() -> None:
    schema = {"type": "object", "additionalProperties": {"type": "string"}}
    assert told(schema, {"k": 1}) == [("Widget/w.k", "Invalid value: 1: must be string, not integer")]


def test_the_same_problem_at_the_same_place_is_told_once() -> None:
    schema = {"allOf": [{"type": "string"}, {"type": "string"}]}
    assert told(schema, 1) == [("Widget/w", "Invalid value: 1: must be string, not integer")]
    assert problems_from_errors("Widget/w", []) == list[Problem]()


def test_paths_name_list_items_and_keys_that_are_not_identifiers() -> None:
    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}},
                                               "labels": {"additionalProperties": {"type": "string"}}}}
    assert told(schema, {"items": ["a", 2], "labels": {"app.kubernetes.io/name": 3}}) == [
        ("Widget/w.items[1]", "Invalid value: 2: must be string, not integer"),
        ("Widget/w.labels[app.kubernetes.io/name]", "Invalid value: 3: must be string, not integer"),
    ]
