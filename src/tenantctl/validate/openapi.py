"""A CRD's structural OpenAPI v3 schema, turned into a strict JSON Schema (2020-12) validator.

The apiserver prunes unknown fields silently; a render that produces them has a bug (a typo, a field
from another provider version), so here an object node with ``properties`` and neither
``additionalProperties`` nor ``x-kubernetes-preserve-unknown-fields`` rejects extra keys. The Kubernetes
extensions get their apiserver meaning: ``x-kubernetes-int-or-string``, ``-preserve-unknown-fields``,
``-embedded-resource`` (apiVersion/kind/metadata allowed and required), ``nullable``, list types
``set``/``map`` (duplicates refused) and ``x-kubernetes-validations`` (CEL, see `cel_rules`).

Conversion happens once per CRD version; whatever cannot be checked faithfully (a rule that does not
compile, a pattern Python cannot match) is collected in `ConvertedSchema.unchecked`, which the caller
must report as errors.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator, ValidationError, validators  # type: ignore[import-untyped]

from tenantctl.validate.cel_rules import CompiledRule, RuleCompileError, compile_rule
from tenantctl.validate.defaults import NO_DEFAULT, DefaultsTree
from tenantctl.validate.formats import GO_PATTERN_KEYWORD, KUBERNETES_FORMATS
from tenantctl.validate.go_regex import GoRegexError, compile_go_regex, translate_go_regex
from tenantctl.validate.metadata import OBJECT_META_SCHEMA
from tenantctl.validate.paths import short_value

__all__ = ["RULES_KEYWORD", "ConvertedSchema", "convert_crd_schema", "strict_validator"]

RULES_KEYWORD = "x-tenantctl-rules"
LIST_KEYWORD = "x-tenantctl-list"

# Value validations copied as they are (OpenAPI v3.0 and JSON Schema agree on them).
_COPIED = (
    "enum", "format", "minimum", "maximum", "minLength", "maxLength", "minItems", "maxItems",
    "minProperties", "maxProperties", "multipleOf", "uniqueItems", "required", "const",
)  # fmt: skip
_JUNCTORS = ("allOf", "anyOf", "oneOf")


@dataclass
class ConvertedSchema:
    """A JSON Schema for one CRD version plus what validation needs beside it."""

    schema: dict[str, Any]
    defaults: DefaultsTree | None
    rules: int = 0
    transition_rules: int = 0
    unchecked: list[str] = field(default_factory=list)


@dataclass
class _Walk:
    rules: int = 0
    transition_rules: int = 0
    unchecked: list[str] = field(default_factory=list)


def convert_crd_schema(root: Mapping[str, Any]) -> ConvertedSchema:
    """Convert ``openAPIV3Schema``; the root's ``metadata`` becomes the ObjectMeta the apiserver enforces."""
    walk = _Walk()
    schema, defaults = _convert(root, walk, path="", structural=True)
    properties = schema.setdefault("properties", {})
    properties["metadata"] = OBJECT_META_SCHEMA
    if defaults is not None:
        defaults.properties.pop("metadata", None)
    return ConvertedSchema(
        schema=schema,
        defaults=defaults if defaults else None,
        rules=walk.rules,
        transition_rules=walk.transition_rules,
        unchecked=walk.unchecked,
    )


def _convert(
    node: Mapping[str, Any], walk: _Walk, *, path: str, structural: bool
) -> tuple[dict[str, Any], DefaultsTree | None]:
    out: dict[str, Any] = {key: node[key] for key in _COPIED if key in node}
    defaults = DefaultsTree()
    preserve_unknown = node.get("x-kubernetes-preserve-unknown-fields") is True
    nullable = node.get("nullable") is True

    node_type = node.get("type")
    if node_type is None and node.get("x-kubernetes-int-or-string") is True:
        node_type = ["integer", "string"]
    if node_type is not None:
        types = list(node_type) if isinstance(node_type, list) else [node_type]
        out["type"] = [*types, "null"] if nullable else types[0] if len(types) == 1 else types
    if nullable and "enum" in out and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]

    _convert_bounds(node, out)
    if isinstance(node.get("pattern"), str):
        _convert_pattern(node["pattern"], out, walk, path)

    if isinstance(node.get("properties"), Mapping):
        out["properties"] = {}
        for name, child in node["properties"].items():
            converted, below = _convert(child, walk, path=f"{path}.{name}", structural=structural)
            out["properties"][name] = converted
            if "default" in child or below is not None:
                defaults.properties[name] = (child.get("default", NO_DEFAULT), below)
    additional = node.get("additionalProperties")
    if isinstance(additional, Mapping):
        out["additionalProperties"], defaults.additional = _convert(
            additional, walk, path=f"{path}[*]", structural=structural
        )
    elif isinstance(additional, bool):
        out["additionalProperties"] = additional
    if isinstance(node.get("items"), Mapping):
        out["items"], defaults.items = _convert(node["items"], walk, path=f"{path}[*]", structural=structural)

    for junctor in _JUNCTORS:
        if junctor == "anyOf" and _is_int_or_string_any_of(node):
            continue  # `type: [integer, string]` says the same, and says it in one error
        if isinstance(node.get(junctor), list):
            out[junctor] = [_convert(sub, walk, path=path, structural=False)[0] for sub in node[junctor]]
    if isinstance(node.get("not"), Mapping):
        out["not"] = _convert(node["not"], walk, path=path, structural=False)[0]

    if node.get("x-kubernetes-embedded-resource") is True:
        _embed_resource(out)
    is_object = node_type == "object" or "properties" in node
    if structural and is_object and "additionalProperties" not in out and not preserve_unknown:
        out["additionalProperties"] = False

    _convert_list_type(node, out)
    _convert_rules(node, out, walk, path, numeric_double=node_type == "number")
    return out, defaults if defaults else None


def _is_int_or_string_any_of(node: Mapping[str, Any]) -> bool:
    branches = node.get("anyOf")
    return (
        node.get("x-kubernetes-int-or-string") is True
        and isinstance(branches, list)
        and all(isinstance(b, Mapping) and b.keys() == {"type"} for b in branches)
        and {b["type"] for b in branches} == {"integer", "string"}
    )


def _convert_bounds(node: Mapping[str, Any], out: dict[str, Any]) -> None:
    # OpenAPI v3.0 spells exclusive bounds as booleans next to minimum/maximum.
    for bound, exclusive in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
        flag = node.get(exclusive)
        if isinstance(flag, bool):
            if flag and bound in out:
                out[exclusive] = out.pop(bound)
        elif isinstance(flag, int | float):
            out[exclusive] = flag


def _convert_pattern(pattern: str, out: dict[str, Any], walk: _Walk, path: str) -> None:
    try:
        compile_go_regex(pattern)
    except GoRegexError as exc:
        walk.unchecked.append(f"pattern at {path or '.'} cannot be checked: {exc}")
        return
    out["pattern"] = translate_go_regex(pattern)
    if out["pattern"] != pattern:
        out[GO_PATTERN_KEYWORD] = pattern


def _embed_resource(out: dict[str, Any]) -> None:
    properties = out.setdefault("properties", {})
    properties.setdefault("apiVersion", {"type": "string"})
    properties.setdefault("kind", {"type": "string"})
    properties["metadata"] = OBJECT_META_SCHEMA
    out["required"] = sorted({*out.get("required", []), "apiVersion", "kind"})


def _convert_list_type(node: Mapping[str, Any], out: dict[str, Any]) -> None:
    list_type = node.get("x-kubernetes-list-type")
    if list_type == "set":
        out[LIST_KEYWORD] = ("set", ())
    elif list_type == "map":
        out[LIST_KEYWORD] = ("map", tuple(node.get("x-kubernetes-list-map-keys") or ()))


def _convert_rules(
    node: Mapping[str, Any], out: dict[str, Any], walk: _Walk, path: str, *, numeric_double: bool
) -> None:
    rules: list[CompiledRule] = []
    for spec in node.get("x-kubernetes-validations") or ():
        try:
            rule = compile_rule(spec, numeric_double=numeric_double)
        except RuleCompileError as exc:
            walk.unchecked.append(f"{exc} (at {path or '.'})")
            continue
        walk.rules += 1
        if rule.transition:
            walk.transition_rules += 1
        else:
            rules.append(rule)
    if rules:
        out[RULES_KEYWORD] = rules


def _rules_keyword(
    validator: Any, rules: list[CompiledRule], instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    for rule in rules:
        failure = rule.check(instance)
        if failure is not None:
            yield ValidationError(failure.message, path=list(failure.field_path))


def _list_keyword(
    validator: Any, spec: tuple[str, tuple[str, ...]], instance: Any, schema: Mapping[str, Any]
) -> Iterator[Any]:
    if not isinstance(instance, list):
        return
    list_type, keys = spec
    seen: dict[str, int] = {}
    for index, item in enumerate(instance):
        if list_type == "map":
            if not isinstance(item, Mapping):
                continue
            identity = short_value({key: item.get(key) for key in keys})
        else:
            identity = short_value(item)
        if identity in seen:
            what = f"map keys {identity}" if list_type == "map" else identity
            yield ValidationError(
                f"Duplicate value: {what} already at index {seen[identity]} (list-type {list_type})",
                path=[index],
            )
        else:
            seen[identity] = index


_StrictValidator = validators.extend(Draft202012Validator, {RULES_KEYWORD: _rules_keyword, LIST_KEYWORD: _list_keyword})


def strict_validator(schema: Mapping[str, Any]) -> Any:
    """A validator for a converted schema: Draft 2020-12, Kubernetes formats, CEL and list-type keywords."""
    return _StrictValidator(schema, format_checker=KUBERNETES_FORMATS)
