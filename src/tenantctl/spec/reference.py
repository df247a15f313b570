"""The spec reference of docs/spec.md, generated from the models so the document cannot drift from the code.

Run `python -m tenantctl.spec.reference` to print it; a test holds docs/spec.md to this output.
"""

from __future__ import annotations

import json
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from tenantctl.spec.base import model_in
from tenantctl.spec.deprecations import DEPRECATIONS
from tenantctl.spec.nodepool import NodePoolSpec
from tenantctl.spec.tenant import TenantClusterSpec

__all__ = ["spec_reference"]


def _type_name(annotation: Any) -> str:
    origin = get_origin(annotation)
    if origin is Annotated:
        return _type_name(get_args(annotation)[0])
    if origin is Literal:
        return " \\| ".join(str(a) for a in get_args(annotation))
    if origin in (Union, types.UnionType):
        return " \\| ".join(_type_name(a) for a in get_args(annotation) if a is not type(None))
    if origin is list:
        return f"list[{_type_name(get_args(annotation)[0])}]"
    if origin is dict:
        return "map"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "object"
    return getattr(annotation, "__name__", str(annotation))


def _default(value: Any, nested: type[BaseModel] | None) -> str:
    if nested is not None or value in (None, [], {}):
        return ""
    return f"`{json.dumps(value) if isinstance(value, bool) else value}`"


def _rows(model: type[BaseModel], prefix: str) -> list[str]:
    rows: list[str] = []
    for name, field in model.model_fields.items():
        path = f"{prefix}.{field.alias or name}"
        nested = model_in(field.annotation)
        shown = "required" if field.is_required() else _default(field.get_default(call_default_factory=True), nested)
        desc = (field.description or "").replace("|", "\\|")
        rows.append(f"| `{path}` | {_type_name(field.annotation)} | {shown} | {desc} |")
        if nested is not None:
            rows += _rows(nested, path)
    return rows


def spec_reference() -> str:
    header = "| field | type | default | meaning |\n|---|---|---|---|"
    parts = []
    for kind, model in (("TenantCluster", TenantClusterSpec), ("NodePool", NodePoolSpec)):
        parts.append(f"#### {kind}\n\n{header}\n" + "\n".join(_rows(model, "spec")))
    parts.append(_deprecations())
    return "\n\n".join(parts) + "\n"


def _deprecations() -> str:
    """Spellings still accepted, with a warning, and what replaces them (spec.deprecations.DEPRECATIONS)."""
    rows = [f"| `{d.field}` | {d.old} | {d.since} | {d.replacement} | {'yes' if d.rolls else 'no'} |"
            for d in DEPRECATIONS]
    return ("#### Deprecated spellings\n\nAccepted and rendered as the release before `since` rendered them, "
            "with a warning from `validate`, `plan`, the webhook and the operator's `Deprecated` condition.\n\n"
            "| field | old spelling | since | new spelling | moving rolls workers |\n|---|---|---|---|---|\n"
            + "\n".join(rows))


if __name__ == "__main__":
    print(spec_reference(), end="")
