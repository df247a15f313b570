"""How a finding names its place: ``Kind/name.spec.template.spec.storage``, ``...labels[app.kubernetes.io/x]``.

Every problem the validators report starts with the object's label and continues with a field path in
the apiserver's own notation (``.field`` for identifiers, ``[key]`` for other map keys, ``[0]`` for list
items), so a message can be pasted next to the rendered YAML and found at once.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["FieldPath", "field_path", "object_label", "parse_field_path", "short_value"]

FieldPath = tuple[str | int, ...]

_IDENTIFIER = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$-]*$")
_SHORT_VALUE_CHARS = 120


def object_label(obj: Mapping[str, Any], index: int) -> str:
    """``Kind/name`` for an object; its position in the input when it has neither a kind nor a name."""
    kind = obj.get("kind")
    metadata = obj.get("metadata")
    name: object = None
    if isinstance(metadata, Mapping):
        name = metadata.get("name") or (
            f"{metadata['generateName']}*" if isinstance(metadata.get("generateName"), str) else None
        )
    kind_text = kind if isinstance(kind, str) and kind else f"object[{index}]"
    return f"{kind_text}/{name}" if isinstance(name, str) and name else kind_text


def field_path(label: str, parts: Iterable[str | int]) -> str:
    """Join an object label and path parts: identifiers as ``.name``, other keys as ``[key]``."""
    out = [label]
    for part in parts:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif _IDENTIFIER.match(part):
            out.append(f".{part}")
        else:
            out.append(f"[{part}]")
    return "".join(out)


_FIELD_PATH_TOKEN = re.compile(
    r"""\.([A-Za-z_$][A-Za-z0-9_$-]*)"""  # .field
    r"""|\[(\d+)\]"""  # [0]
    r"""|\['((?:[^'\\]|\\.)*)'\]"""  # ['key']
    r"""|\["((?:[^"\\]|\\.)*)"\]"""  # ["key"]
)


def parse_field_path(text: str) -> FieldPath | None:
    """Parts of a CEL rule's ``fieldPath`` (``.spec.foo['a.b'][0]``); None when it is not in that form."""
    parts: list[str | int] = []
    pos = 0
    while pos < len(text):
        match = _FIELD_PATH_TOKEN.match(text, pos)
        if match is None:
            return None
        ident, index, single, double = match.groups()
        if ident is not None:
            parts.append(ident)
        elif index is not None:
            parts.append(int(index))
        else:
            parts.append(single if single is not None else double)
        pos = match.end()
    return tuple(parts)


def short_value(value: Any) -> str:
    """Compact JSON for a message, cut to a readable length."""
    try:
        text = json.dumps(value, sort_keys=True, separators=(", ", ": "), default=str)
    except (TypeError, ValueError):
        text = repr(value)
    if len(text) > _SHORT_VALUE_CHARS:
        text = text[: _SHORT_VALUE_CHARS - 1] + "…"
    return text
