"""CRD defaulting, applied before validation exactly because the apiserver applies it first.

CEL rules see defaulted objects: capmox's ``self.full || !has(self.storage)`` holds for a render that
omits ``full`` only because ``full`` defaults to true. `DefaultsTree` keeps just the branches of a schema
that lead to a ``default`` (built once per CRD version), and `apply_defaults` copies only the parts of
an object it changes, never the caller's object.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

__all__ = ["NO_DEFAULT", "DefaultsTree", "apply_defaults"]

NO_DEFAULT: Any = object()
"""Marks a property that has no default itself but defaults somewhere below it."""


@dataclass
class DefaultsTree:
    """Defaults under one schema node: per property (its default, or NO_DEFAULT, and what lies below)."""

    properties: dict[str, tuple[Any, DefaultsTree | None]] = field(default_factory=dict)
    items: DefaultsTree | None = None
    additional: DefaultsTree | None = None

    def __bool__(self) -> bool:
        return bool(self.properties) or self.items is not None or self.additional is not None


def apply_defaults(value: Any, tree: DefaultsTree | None) -> Any:
    """`value` with every missing defaulted field filled in; the same object when nothing changes."""
    if tree is None:
        return value
    if isinstance(value, dict):
        return _default_object(value, tree)
    if isinstance(value, list) and tree.items is not None:
        items = [apply_defaults(item, tree.items) for item in value]
        return items if any(new is not old for new, old in zip(items, value, strict=True)) else value
    return value


def _default_object(value: dict[str, Any], tree: DefaultsTree) -> dict[str, Any]:
    result = value
    for key, (default, below) in tree.properties.items():
        if key in value:
            new = apply_defaults(value[key], below)
            if new is value[key]:
                continue
        elif default is NO_DEFAULT:
            continue
        else:
            new = apply_defaults(copy.deepcopy(default), below)
        if result is value:
            result = dict(value)
        result[key] = new
    if tree.additional is not None:
        for key, item in value.items():
            if key in tree.properties:
                continue
            new = apply_defaults(item, tree.additional)
            if new is not item:
                if result is value:
                    result = dict(value)
                result[key] = new
    return result
