"""jsonschema's errors, retold as tenantctl Problems: one per field, saying what rule failed with what value.

jsonschema speaks about the schema (``'x' is a required property`` at the parent, ``Additional properties
are not allowed`` for a whole object); a reader of a render wants the field: the missing or unknown key
is appended to the path, and unknown keys get the closest known name as a hint.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any

from jsonschema.exceptions import best_match  # type: ignore[import-untyped]

from tenantctl.problems import Problem
from tenantctl.validate.formats import GO_PATTERN_KEYWORD
from tenantctl.validate.paths import field_path, short_value

__all__ = ["problems_from_errors"]

_JSON_TYPES = (
    (bool, "boolean"),
    (int, "integer"),
    (float, "number"),
    (str, "string"),
    (list, "array"),
    (dict, "object"),
    (type(None), "null"),
)
_LIMIT_WORDS = {
    "minimum": ">=",
    "maximum": "<=",
    "exclusiveMinimum": ">",
    "exclusiveMaximum": "<",
}
_SIZE_WORDS = {
    "minLength": ("too short", "at least {} characters", len),
    "maxLength": ("too long", "at most {} characters", len),
    "minItems": ("too few items", "at least {} items", len),
    "maxItems": ("too many items", "at most {} items", len),
    "minProperties": ("too few properties", "at least {} properties", len),
    "maxProperties": ("too many properties", "at most {} properties", len),
}


def problems_from_errors(label: str, errors: Iterable[Any]) -> list[Problem]:
    """Problems for `jsonschema.ValidationError`s of one object labelled `label` (``Kind/name``)."""
    problems: list[Problem] = []
    seen: set[tuple[str, str]] = set()
    for error in errors:
        for parts, message in _describe(error):
            where = field_path(label, [*error.absolute_path, *parts])
            if (where, message) not in seen:
                seen.add((where, message))
                problems.append(Problem(where, message))
    return problems


def _describe(error: Any) -> list[tuple[list[str | int], str]]:
    keyword, expected, value = error.validator, error.validator_value, error.instance
    if keyword == "additionalProperties" and expected is False and isinstance(value, Mapping):
        return [([key], _unknown_field(key, error.schema)) for key in _extra_keys(value, error.schema)]
    if keyword == "required" and isinstance(value, Mapping):
        return [([name], "Required value: field is missing") for name in expected if name not in value]
    if keyword == "type":
        return [([], _wrong_type(expected, value))]
    if keyword == "enum":
        allowed = ", ".join(short_value(v) for v in expected)
        return [([], f"Unsupported value: {short_value(value)}; supported values: {allowed}")]
    if keyword == "const":
        return [([], f"Unsupported value: {short_value(value)}; must be {short_value(expected)}")]
    if keyword == "pattern":
        shown = error.schema.get(GO_PATTERN_KEYWORD, expected)  # the CRD's own spelling, not Python's
        return [([], f"Invalid value: {short_value(value)}: must match the regular expression {shown}")]
    if keyword == "format":
        cause = f" ({error.cause})" if error.cause else ""
        return [([], f"Invalid value: {short_value(value)}: not a valid {expected}{cause}")]
    if keyword in _LIMIT_WORDS:
        return [([], f"Invalid value: {short_value(value)}: must be {_LIMIT_WORDS[keyword]} {expected}")]
    if keyword in _SIZE_WORDS:
        headline, limit, measure = _SIZE_WORDS[keyword]
        return [([], f"{headline}: {measure(value)}, must have {limit.format(expected)} ({short_value(value)})")]
    if keyword == "multipleOf":
        return [([], f"Invalid value: {short_value(value)}: must be a multiple of {expected}")]
    if keyword == "uniqueItems":
        return [([], f"Duplicate value: items must be unique ({short_value(value)})")]
    if keyword in ("anyOf", "oneOf"):
        closest = best_match(error.context) if error.context else None
        hint = f"; closest: {closest.message}" if closest is not None else ""
        which = "any" if keyword == "anyOf" else "exactly one"
        return [([], f"Invalid value: {short_value(value)}: must match {which} of the allowed forms{hint}")]
    if keyword in ("x-tenantctl-rules", "x-tenantctl-list"):
        return [([], error.message)]
    return [([], f"Invalid value: {short_value(value)}: {error.message}")]


def _extra_keys(value: Mapping[str, Any], schema: Mapping[str, Any]) -> list[str]:
    known = schema.get("properties", {})
    patterns = [re.compile(p) for p in schema.get("patternProperties", {})]
    return [k for k in value if k not in known and not any(p.search(k) for p in patterns)]


def _unknown_field(key: str, schema: Mapping[str, Any]) -> str:
    known = sorted(schema.get("properties", {}))
    if not known:
        return f"unknown field {key!r}: this object allows no fields"
    close = difflib.get_close_matches(key, known, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = ", ".join(known[:12]) + (", …" if len(known) > 12 else "")
    return f"unknown field {key!r}{hint} (known fields: {listed})"


def _json_type(value: Any) -> str:
    return next((name for py_type, name in _JSON_TYPES if isinstance(value, py_type)), type(value).__name__)


def _wrong_type(expected: Any, value: Any) -> str:
    types = [expected] if isinstance(expected, str) else list(expected)
    if value is None:
        return f"Invalid value: null: must be {' or '.join(types)} (the field is not nullable; omit it instead)"
    return f"Invalid value: {short_value(value)}: must be {' or '.join(types)}, not {_json_type(value)}"
