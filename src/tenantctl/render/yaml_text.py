"""YAML text inside rendered objects (Talos machine configs, controller configs), byte for byte as PyYAML writes it.

A changed byte in a TalosConfigTemplate replaces the template on every tenant, so the text must stay what
`yaml.safe_dump(..., default_flow_style=False)` has always written. Even libyaml (`CSafeDumper`) calls back
into Python four times per node (representer, resolver twice, path hooks): two thirds of a render went
there. `to_yaml` writes the common shape directly (block mappings and sequences of plain or single-quoted
ASCII scalars, lines that never fold) and hands anything else to libyaml whole; a hypothesis test pins the
two byte-equal on arbitrary data.
"""

from __future__ import annotations

import re
from typing import Any

import yaml
from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

__all__ = ["DUMPER", "block_text", "libyaml_dump", "to_yaml"]

DUMPER: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

_STR_TAG = "tag:yaml.org,2002:str"
# The emitters break a line at a space past this column; a line whose spaces sit before it never folds.
_WIDTH = 80
# Strings both emitters print unquoted in block context (when they resolve to str): printable ASCII without
# leading indicators, `#`, `: `, quotes, or edge spaces. Anything else goes to libyaml.
_PLAIN = re.compile(r"[A-Za-z0-9/_][A-Za-z0-9._/:=+@%,~$^()<>;*&!?| -]*")
_IMPLICIT = Resolver.yaml_implicit_resolvers
# After a letter only YAML 1.1's booleans and nulls resolve (`FALSE` the longest): longer words are strings.
_LONGEST_WORD = 5
_RESOLVER = Resolver()
# A longer key is written as an explicit `? key` (libyaml's simple-key limit).
_LONGEST_KEY = 128
_TEXT: dict[str, str] = {}
_SHORT, _TEXT_KEPT = 64, 8192


class _Unsupported(Exception):
    """Data outside the shape `to_yaml` writes itself."""


def libyaml_dump(data: Any, *, sort_keys: bool = False) -> str:
    """The reference: what `to_yaml` must equal, and what it falls back to."""
    return yaml.dump(data, Dumper=DUMPER, sort_keys=sort_keys, default_flow_style=False)


def _string(value: str) -> str:
    """Short strings (keys, quantities, durations, addresses) recur in every render: their text is kept."""
    text = _TEXT.get(value)
    if text is not None:
        return text
    if not value:
        return "''"
    if not _PLAIN.fullmatch(value) or value[-1] in ": " or ": " in value:
        raise _Unsupported
    text = value
    if (
        value[0] in _IMPLICIT
        and (len(value) <= _LONGEST_WORD or not value[0].isalpha())
        and _RESOLVER.resolve(ScalarNode, value, (True, False)) != _STR_TAG  # type: ignore[no-untyped-call]
    ):
        text = f"'{value}'"
    if len(value) <= _SHORT and len(_TEXT) < _TEXT_KEPT:
        _TEXT[value] = text
    return text


def _key(key: Any) -> str:
    if type(key) is not str or len(key) > _LONGEST_KEY:
        raise _Unsupported
    return _string(key)


def _leaf(value: Any, seen: set[int]) -> str:
    """The text of a scalar or an empty collection, or `_Unsupported`."""
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return str(value)
    if value is None:
        return "null"
    if kind is dict or kind is list:
        _once(value, seen)
        return "{}" if kind is dict else "[]"
    raise _Unsupported


def _once(node: dict[Any, Any] | list[Any], seen: set[int]) -> None:
    """A container reached twice is an anchor and alias in PyYAML's output (or a cycle): libyaml writes those."""
    if id(node) in seen:
        raise _Unsupported
    seen.add(id(node))


def _mapping(data: dict[Any, Any], indent: str, first: str, out: list[str], seen: set[int], sort_keys: bool) -> None:
    """`first` prefixes the first key (`- ` of an enclosing sequence item); later keys start at `indent`.
    The kept texts of keys and string values are looked up here first: a call per key and value was a
    fifth of a render's YAML time."""
    _once(data, seen)
    prefix = first
    kept = _TEXT
    for key, value in sorted(data.items()) if sort_keys else data.items():
        key_text = kept.get(key) if type(key) is str else None
        head = f"{prefix}{key_text if key_text is not None else _key(key)}:"
        prefix = indent
        kind = type(value)
        if kind is dict and value:
            out.append(head)
            _mapping(value, indent + "  ", indent + "  ", out, seen, sort_keys)
        elif kind is list and value:
            out.append(head)
            _sequence(value, indent, indent, out, seen, sort_keys)
        else:
            text = (kept.get(value) if kind is str else None) or _leaf(value, seen)
            if " " in text and len(head) + 1 + text.rindex(" ") > _WIDTH:
                raise _Unsupported
            out.append(f"{head} {text}")


def _sequence(data: list[Any], indent: str, first: str, out: list[str], seen: set[int], sort_keys: bool) -> None:
    """Block sequences are indentless under a key, as PyYAML writes them."""
    _once(data, seen)
    prefix = first
    for item in data:
        kind = type(item)
        if kind is dict and item:
            _mapping(item, indent + "  ", prefix + "- ", out, seen, sort_keys)
        elif kind is list and item:
            _sequence(item, indent + "  ", prefix + "- ", out, seen, sort_keys)
        else:
            text = (_TEXT.get(item) if kind is str else None) or _leaf(item, seen)
            if " " in text and len(prefix) + 2 + text.rindex(" ") > _WIDTH:
                raise _Unsupported
            out.append(f"{prefix}- {text}")
        prefix = indent


def block_text(data: Any, *, sort_keys: bool = False) -> str | None:
    """The YAML of a non-empty mapping in the shape written here, or None for libyaml to write."""
    if type(data) is not dict or not data:
        return None
    out: list[str] = []
    try:
        _mapping(data, "", "", out, set(), sort_keys)
    except (_Unsupported, RecursionError, TypeError):
        return None
    out.append("")
    return "\n".join(out)


def to_yaml(data: Any, *, sort_keys: bool = False) -> str:
    """Block-style YAML of `data`, as `yaml.safe_dump(..., default_flow_style=False)` writes it."""
    text = block_text(data, sort_keys=sort_keys)
    return libyaml_dump(data, sort_keys=sort_keys) if text is None else text
