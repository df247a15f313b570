"""CustomResourceDefinitions for TenantCluster and NodePool, generated from the pydantic models.

One source of truth: the schema the API server enforces is the models' own JSON schema, made
structural (refs inlined, unions of scalars as int-or-string, every node typed), with the models'
constraints (enum, pattern, bounds, sizes, list types), their defaults (persisted at creation, so a
release that changes a default does not move live tenants) and the CEL rules of `spec.crd_rules`
attached where they belong. Nothing here names a field: a field added to a model reaches the CRD.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticUndefined

from tenantctl.spec.base import model_in
from tenantctl.spec.crd_rules import FIELD_RULES, ITEM_RULES, MODEL_RULES, ROOT_RULES
from tenantctl.spec.nodepool import NodePool, NodePoolSpec
from tenantctl.spec.tenant import TenantCluster, TenantClusterSpec

__all__ = [
    "CRD_GROUP", "CRD_VERSION", "CrdKind", "defaulted", "model_defaults", "render_crd", "render_crds",
    "structural_schema",
]

CRD_GROUP = "tenantctl.io"
CRD_VERSION = "v1alpha1"
_SCALARS = {"string", "integer", "number", "boolean"}
_INT64_EDGE = 2**63 - 2**10
"""Bounds this close to an int64's edge are not exactly a float64: the API server's reading of them wraps."""
_KEPT = (
    "description", "minimum", "maximum", "minLength", "maxLength", "pattern", "format",
    "minItems", "maxItems", "minProperties", "maxProperties",
    "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
)  # fmt: skip
# JSON Schema 2020-12 spells exclusive bounds as numbers; OpenAPI v3.0 (the CRD's dialect) as flags.
_EXCLUSIVE = {"exclusiveMinimum": "minimum", "exclusiveMaximum": "maximum"}
Rules = Mapping[str, tuple[dict[str, str], ...]]


@dataclass(frozen=True)
class CrdKind:
    """One custom resource of the tenantctl.io group, generated from its pydantic model."""

    kind: str
    plural: str
    short_names: tuple[str, ...]
    model: type[BaseModel]
    spec_model: type[BaseModel]
    columns: tuple[tuple[str, str, str], ...]
    scope: str = "Namespaced"


_Kind = CrdKind


_KINDS = (
    _Kind(
        "TenantCluster",
        "tenantclusters",
        ("tc",),
        TenantCluster,
        TenantClusterSpec,
        (
            ("Substrate", "string", ".spec.substrate"),
            ("Version", "string", ".spec.version"),
            ("Phase", "string", ".status.phase"),
            ("Endpoint", "string", ".status.endpoint"),
        ),
    ),
    _Kind(
        "NodePool",
        "nodepools",
        ("np",),
        NodePool,
        NodePoolSpec,
        (
            ("Cluster", "string", ".spec.cluster"),
            ("Replicas", "integer", ".spec.replicas"),
            ("Min", "integer", ".spec.minReplicas"),
            ("Max", "integer", ".spec.maxReplicas"),
            ("Phase", "string", ".status.phase"),
        ),
    ),
)


def _models_under(
    model: type[BaseModel], found: dict[str, type[BaseModel]] | None = None
) -> dict[str, type[BaseModel]]:
    """Every model reachable from `model`, by the name pydantic gives its `$defs` entry."""
    found = {} if found is None else found
    found[model.__name__] = model
    for info in model.model_fields.values():
        inner = model_in(info.annotation)
        if inner is not None and inner.__name__ not in found:
            _models_under(inner, found)
    return found


def model_defaults(model: type[BaseModel]) -> dict[str, Any]:
    """The wire form (alias, JSON) of each field default of `model`; None and required fields have none."""
    out: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if info.is_required():
            continue
        value = info.get_default(call_default_factory=True)
        if value is None or value is PydanticUndefined:
            continue
        annotation: Any = info.annotation
        dumped = TypeAdapter(annotation).dump_python(value, mode="json", by_alias=True, exclude_none=True)
        out[info.alias or name] = dumped
    return out


@dataclass
class _Translator:
    """Walks one pydantic JSON schema; records which rule keys it attached so none goes astray."""

    defs: Mapping[str, Any]
    models: Mapping[str, type[BaseModel]]
    used: set[str] = field(default_factory=set)

    def node(self, raw: Mapping[str, Any], *, field_key: str | None = None) -> dict[str, Any]:
        extras = self._extras(raw)
        target = raw
        model_name: str | None = None
        if "$ref" in raw:
            model_name = raw["$ref"].rsplit("/", 1)[-1]
            target = self.defs[model_name]
            extras = {**self._extras(target), **extras}
        if "anyOf" in target:
            options = [o for o in target["anyOf"] if o.get("type") != "null"]
            if len(options) == 1:
                out = {**self.node(options[0], field_key=field_key), **extras}
                return out
            resolved = [self.defs[o["$ref"].rsplit("/", 1)[-1]] if "$ref" in o else o for o in options]
            if {o.get("type") for o in resolved} <= {"string", "integer", "number"}:
                out = {"x-kubernetes-int-or-string": True, **extras}
                return self._with_rules(out, field_key)
            raise ValueError(f"cannot express union {options} as a structural schema")
        out = self._typed(target, model_name, field_key)
        out.update(extras)
        return self._with_rules(out, field_key)

    def _typed(self, node: Mapping[str, Any], model_name: str | None, field_key: str | None) -> dict[str, Any]:
        if "enum" in node or "const" in node:
            values = node.get("enum") or [node["const"]]
            return {"type": node["type"], "enum": list(values)}
        kind = node.get("type")
        if kind == "object" and "properties" in node:
            name = model_name or str(node.get("title", ""))
            return self._object(node, name)
        if kind == "object":
            values_schema = node.get("additionalProperties")
            out: dict[str, Any] = {"type": "object"}
            if isinstance(values_schema, dict):
                out["additionalProperties"] = self.node(values_schema)
            else:
                out["x-kubernetes-preserve-unknown-fields"] = True
            return out
        if kind == "array":
            item_key = f"{field_key}[]" if field_key else None
            return {"type": "array", "items": self.node(node.get("items", {}), field_key=item_key)}
        if kind in _SCALARS:
            return {"type": kind}
        raise ValueError(f"cannot express {node} as a structural schema")

    def _object(self, node: Mapping[str, Any], model_name: str) -> dict[str, Any]:
        model = self.models.get(model_name)
        defaults = model_defaults(model) if model is not None else {}
        properties: dict[str, Any] = {}
        for key, child in node["properties"].items():
            translated = self.node(child, field_key=f"{model_name}.{key}")
            translated.pop("default", None)
            if key in defaults:
                translated["default"] = defaults[key]
            properties[key] = translated
        out: dict[str, Any] = {"type": "object", "properties": properties}
        if node.get("required"):
            out["required"] = list(node["required"])
        rules = MODEL_RULES.get(model_name)
        if rules:
            self.used.add(model_name)
            out["x-kubernetes-validations"] = [dict(r) for r in rules]
        return out

    def _with_rules(self, out: dict[str, Any], field_key: str | None) -> dict[str, Any]:
        table: Rules = ITEM_RULES if field_key and field_key.endswith("[]") else FIELD_RULES
        key = field_key.removesuffix("[]") if field_key else None
        rules = table.get(key) if key else None
        if rules:
            assert key is not None
            self.used.add(f"{key}[]" if table is ITEM_RULES else key)
            out["x-kubernetes-validations"] = [*out.get("x-kubernetes-validations", ()), *map(dict, rules)]
        return out

    @staticmethod
    def _extras(node: Mapping[str, Any]) -> dict[str, Any]:
        out = {k: node[k] for k in _KEPT if k in node}
        for exclusive, bound in _EXCLUSIVE.items():
            if isinstance(node.get(exclusive), int | float) and not isinstance(node[exclusive], bool):
                out[bound] = node[exclusive]
                out[exclusive] = True
        for bound in ("minimum", "maximum"):
            if abs(out.get(bound, 0)) >= _INT64_EDGE:
                # The API server reads a bound as a float64: 2**63-1 becomes 2**63 and wraps to -2**63 as an
                # int64 ("should be less than or equal to -9223372036854775808", found on the real server).
                # An int64's range is what `format: int64` already holds it to.
                del out[bound]
                out.pop(f"exclusive{bound.title()}", None)
                if node.get("type") == "integer":
                    out["format"] = "int64"
        if "enum" in node and "type" not in node:
            out["enum"] = list(node["enum"])
        return out


def structural_schema(model: type[BaseModel]) -> tuple[dict[str, Any], set[str]]:
    """The structural schema of `model` and the rule keys attached to it."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    translator = _Translator(raw.get("$defs", {}), _models_under(model))
    schema = translator.node(raw)
    schema.pop("title", None)
    return schema, translator.used


def defaulted(schema: Mapping[str, Any], value: Any) -> Any:
    """`value` with the schema's defaults filled in below it, as the API server defaults an object.

    A default is itself validated by the API server, CEL rules included, without its nested defaults
    applied: `spec: {default: {}}` is refused ("no such key: substrate" in a rule on spec). So a default
    object is written out whole, as it would be once defaulted.
    """
    if not isinstance(value, dict) or schema.get("type") != "object":
        return value
    out = dict(value)
    for key, sub in (schema.get("properties") or {}).items():
        if key not in out and "default" in sub:
            out[key] = sub["default"]
        if key in out:
            out[key] = defaulted(sub, out[key])
    return out


def _metadata_schema() -> dict[str, Any]:
    # The API server lets a CRD say only this about metadata; it makes `.metadata.name` a valid fieldPath.
    return {"type": "object", "properties": {"name": {"type": "string", "maxLength": 253}}}


def _root(kind: _Kind) -> tuple[dict[str, Any], set[str]]:
    spec_schema, used = structural_schema(kind.spec_model)
    spec_field = kind.model.model_fields["spec"]
    root: dict[str, Any] = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": _metadata_schema(),
            "spec": spec_schema,
            # The operator writes status through the status subresource; without this a real API
            # server would prune every field of it.
            "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        },
    }
    if spec_field.is_required():
        root["required"] = ["spec"]
    else:
        spec_schema["default"] = defaulted(spec_schema, {})
    rules = ROOT_RULES.get(kind.kind)
    if rules:
        used.add(kind.kind)
        root["x-kubernetes-validations"] = [dict(r) for r in rules]
    return root, used


def _crd(kind: _Kind, schema: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{CRD_GROUP}", "labels": {"app.kubernetes.io/managed-by": "tenantctl"}},
        "spec": {
            "group": CRD_GROUP,
            "scope": kind.scope,
            "names": {
                "kind": kind.kind,
                "listKind": f"{kind.kind}List",
                "plural": kind.plural,
                "singular": kind.kind.lower(),
                "shortNames": list(kind.short_names),
                "categories": ["tenantctl"],
            },
            "versions": [
                {
                    "name": CRD_VERSION,
                    "served": True,
                    "storage": True,
                    "subresources": {"status": {}},
                    "additionalPrinterColumns": [
                        *({"name": n, "type": t, "jsonPath": p} for n, t, p in kind.columns),
                        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                    ],
                    "schema": {"openAPIV3Schema": schema},
                }
            ],
        },
    }


def render_crd(kind: CrdKind) -> dict[str, Any]:
    """The CRD of a kind defined outside the spec (the Platform); its models carry no CEL rule table."""
    schema, _ = _root(kind)
    return _crd(kind, schema)


def render_crds() -> list[dict[str, Any]]:
    """Both CRDs; refuses (ValueError) a rule table entry that names no model or field of them."""
    crds: list[dict[str, Any]] = []
    used: set[str] = set()
    for kind in _KINDS:
        schema, attached = _root(kind)
        used |= attached
        crds.append(_crd(kind, schema))
    declared = {*MODEL_RULES, *FIELD_RULES, *(f"{k}[]" for k in ITEM_RULES), *ROOT_RULES}
    stray = sorted(declared - used)
    if stray:
        raise ValueError(f"CEL rules attached to nothing (renamed model or field?): {', '.join(stray)}")
    return crds
