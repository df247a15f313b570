"""CustomResourceDefinitions for TenantCluster and NodePool, generated from the pydantic models.

One source of truth: the schema the API server enforces is the models' own JSON schema, made
structural (refs inlined, unions of scalars as int-or-string, every node typed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from tenantctl.spec.nodepool import NodePoolSpec
from tenantctl.spec.tenant import TenantClusterSpec

__all__ = ["CRD_GROUP", "render_crds", "structural_schema"]

CRD_GROUP = "tenantctl.io"
CRD_VERSION = "v1alpha1"
_SCALARS = {"string", "integer", "number", "boolean"}
_KEPT = ("description", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems")


@dataclass(frozen=True)
class _Kind:
    kind: str
    plural: str
    short_names: tuple[str, ...]
    spec_model: type[BaseModel]
    columns: tuple[tuple[str, str, str], ...]


_KINDS = (
    _Kind(
        "TenantCluster",
        "tenantclusters",
        ("tc",),
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


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    return node


def structural_schema(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Translate one JSON-schema node of a pydantic model into a Kubernetes structural schema node."""
    node = _resolve(node, defs)
    extras = {k: node[k] for k in _KEPT if k in node}
    if "anyOf" in node:
        options = [_resolve(o, defs) for o in node["anyOf"] if o.get("type") != "null"]
        if len(options) == 1:
            return {**structural_schema(options[0], defs), **extras}
        if {o.get("type") for o in options} <= {"string", "integer", "number"}:
            return {"x-kubernetes-int-or-string": True, **extras}
        raise ValueError(f"cannot express union {options} as a structural schema")
    if "enum" in node or "const" in node:
        values = node.get("enum") or [node["const"]]
        return {"type": "string", "enum": list(values), **extras}
    kind = node.get("type")
    if kind == "object" and "properties" in node:
        out: dict[str, Any] = {
            "type": "object",
            "properties": {k: structural_schema(v, defs) for k, v in node["properties"].items()},
            **extras,
        }
        if node.get("required"):
            out["required"] = list(node["required"])
        return out
    if kind == "object":
        values_schema = node.get("additionalProperties")
        out = {"type": "object", **extras}
        if isinstance(values_schema, dict):
            out["additionalProperties"] = structural_schema(values_schema, defs)
        else:
            out["x-kubernetes-preserve-unknown-fields"] = True
        return out
    if kind == "array":
        return {"type": "array", "items": structural_schema(node.get("items", {}), defs), **extras}
    if kind in _SCALARS:
        return {"type": kind, **extras}
    raise ValueError(f"cannot express {node} as a structural schema")


def _crd(kind: _Kind) -> dict[str, Any]:
    raw = kind.spec_model.model_json_schema(by_alias=True, mode="validation")
    spec_schema = structural_schema(raw, raw.get("$defs", {}))
    spec_schema.pop("title", None)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{CRD_GROUP}", "labels": {"app.kubernetes.io/managed-by": "tenantctl"}},
        "spec": {
            "group": CRD_GROUP,
            "scope": "Namespaced",
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
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            **({"required": ["spec"]} if kind.kind == "NodePool" else {}),
                            "properties": {
                                "apiVersion": {"type": "string"},
                                "kind": {"type": "string"},
                                "metadata": {"type": "object"},
                                "spec": spec_schema,
                                "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                            },
                        }
                    },
                }
            ],
        },
    }


def render_crds() -> list[dict[str, Any]]:
    return [_crd(k) for k in _KINDS]
