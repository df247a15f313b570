"""Reading and writing multi-document YAML: line numbers on malformed input, stable output."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tenantctl.problems import InvalidInput, Problem

__all__ = ["dump_objects", "load_documents", "load_file"]


def load_documents(text: str, source: str = "<stdin>") -> list[dict[str, Any]]:
    """Parse every YAML document in `text`; malformed YAML is refused with its line and column."""
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InvalidInput([Problem(where, f"malformed YAML: {exc.problem or exc.context}")]) from None
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(source, f"malformed YAML: {exc}")]) from None
    problems = [
        Problem(f"{source}[document {i}]", f"expected a mapping, got {type(d).__name__}")
        for i, d in enumerate(docs)
        if not isinstance(d, dict)
    ]
    if problems:
        raise InvalidInput(problems)
    return docs


def load_file(path: Path | str) -> list[dict[str, Any]]:
    """Load a YAML file (``-`` for stdin); an unreadable file is a refusal, not a traceback."""
    if str(path) == "-":
        import sys

        return load_documents(sys.stdin.read(), "<stdin>")
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput([Problem(str(p), f"cannot read file: {exc.strerror or exc}")]) from None
    return load_documents(text, str(p))


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as literal blocks: readable, diffable renders."""


def _str_presenter(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    if "\n" in data:
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", data)


_Dumper.add_representer(str, _str_presenter)


def dump_objects(objects: Iterable[Mapping[str, Any]], fmt: str = "yaml") -> str:
    """Serialise objects deterministically: YAML documents or a kubectl-style `v1/List` in JSON."""
    items = [dict(o) for o in objects]
    if fmt == "json":
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=2) + "\n"
    return yaml.dump_all(items, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096)
