"""Copies of the plain data renderers hand out (dicts, lists, scalars), so no two objects share a node.

`copy.deepcopy` walks memo tables and dispatch for types a render never holds; this walk is the same
copy for JSON-shaped data at a fraction of the cost (a render copies thousands of nodes).
"""

from __future__ import annotations

from typing import TypeVar

__all__ = ["plain_copy"]

T = TypeVar("T")

# Most nodes are leaves: testing their exact type first spares a call per leaf.
_SCALARS = frozenset({str, int, bool, float, type(None)})


def plain_copy(value: T) -> T:
    """A deep copy of nested dicts, lists and tuples; scalars (immutable) are shared."""
    if isinstance(value, dict):
        return {k: v if type(v) in _SCALARS else plain_copy(v) for k, v in value.items()}  # type: ignore[return-value]
    if isinstance(value, list):
        return [v if type(v) in _SCALARS else plain_copy(v) for v in value]  # type: ignore[return-value]
    if isinstance(value, tuple):
        return tuple(plain_copy(v) for v in value)  # type: ignore[return-value]
    return value
