"""Reading and writing multi-document YAML: bounded, alias-free, line numbers on every refusal.

Input is hostile until proven otherwise, so the loader refuses, with the line, what would make a
later step crash or hang: aliases (a billion-laughs bomb expands before any model sees it),
nesting beyond `Limits.depth`, oversized files, strings and lists, integers outside 64 bits,
non-finite floats, lone UTF-16 surrogates (libyaml cannot read them back) and duplicate keys
(last-wins would silently drop a value).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
import yaml.cyaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from tenantctl.problems import InvalidInput, Problem

__all__ = ["INPUT_LIMITS", "RENDERED_LIMITS", "Limits", "dump_objects", "load_documents", "load_file"]


@dataclass(frozen=True)
class Limits:
    """How large a file may be before tenantctl refuses it; every bound is a refusal, never a truncation."""

    file_bytes: int
    string_chars: int
    items: int
    depth: int = 64
    documents: int = 1_000
    """Documents in one file: a flood of empty ones would cost seconds each thousand and bury the answer."""


# A tenant's own documents: the largest legitimate string is a CA bundle or a values override.
INPUT_LIMITS = Limits(file_bytes=4 * 2**20, string_chars=256 * 2**10, items=10_000)
# A render read back (`providers plan --previous`): ConfigMaps carry whole provider components.
RENDERED_LIMITS = Limits(file_bytes=256 * 2**20, string_chars=4 * 2**20, items=100_000, documents=100_000)

INT64 = (-(2**63), 2**63 - 1)
_LIBYAML_TOO_DEEP = "exceeded maximum nesting depth"
_SURROGATE = re.compile("[\ud800-\udfff]")
_INT_DIGITS = 25  # more digits than any int64, fewer than Python's int-parsing guard


class _Refusal(Exception):
    """Stops loading at once (nesting too deep): the rest of the file cannot be judged."""

    def __init__(self, mark: Any, message: str) -> None:
        self.mark, self.message = mark, message


def _shorten(text: str, keep: int = 40) -> str:
    return text if len(text) <= keep else f"{text[:keep]}… ({len(text)} characters)"


# libyaml's parser (PyYAML's wheels carry it; the stubs do not export it).
_CParser: Any = getattr(yaml.cyaml, "CParser")  # noqa: B009


class _BoundedLoader(Composer, _CParser, SafeConstructor, Resolver):  # type: ignore[misc]
    """A safe loader whose composer judges every node before it is constructed.

    libyaml scans and parses (the pure-Python scanner was nine tenths of loading a large file: a list of
    10,000 entries took seconds); PyYAML's own composer, first in line here, builds the nodes from
    libyaml's events, so each node is judged before it is constructed, as with the pure-Python loader."""

    limits: Limits = INPUT_LIMITS

    def __init__(self, stream: str, source: str, limits: Limits) -> None:
        _CParser.__init__(self, stream)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.source, self.limits = source, limits
        self.findings: list[Problem] = []
        self._depth = 0

    def where(self, mark: Any) -> str:
        return f"{self.source}:{mark.line + 1}:{mark.column + 1}" if mark is not None else self.source

    def refuse(self, mark: Any, message: str) -> None:
        self.findings.append(Problem(self.where(mark), message))

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()
            self.refuse(
                event.start_mark,
                f"alias *{event.anchor} refused: tenantctl reads no YAML aliases (an alias can expand "
                "exponentially before any check runs); write the value out",
            )
            return ScalarNode("tag:yaml.org,2002:null", "", event.start_mark, event.end_mark)
        self._depth += 1
        try:
            if self._depth > self.limits.depth:
                mark = self.peek_event().start_mark
                raise _Refusal(mark, f"nested more than {self.limits.depth} levels deep")
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        if node is not None:
            self._judge(node)
        return node

    def _judge(self, node: Node) -> None:
        if isinstance(node, ScalarNode):
            value = node.value
            if len(value) > self.limits.string_chars:
                self.refuse(node.start_mark, f"a string of {len(value)} characters; at most "
                            f"{self.limits.string_chars} are accepted")
            elif _SURROGATE.search(value):
                self.refuse(node.start_mark, f"{_shorten(value)!r} holds a lone UTF-16 surrogate, which is "
                            "not a character (the output could not be read back); remove it")
        elif isinstance(node, SequenceNode | MappingNode) and len(node.value) > self.limits.items:
            self.refuse(node.start_mark, f"{len(node.value)} entries; at most {self.limits.items} are accepted")
        if isinstance(node, MappingNode):
            self._duplicate_keys(node)

    def _duplicate_keys(self, node: MappingNode) -> None:
        first: dict[tuple[str, str], Any] = {}
        for key, _ in node.value:
            if not isinstance(key, ScalarNode):
                continue
            seen = first.setdefault((key.tag, key.value), key.start_mark)
            if seen is not key.start_mark and seen is not None:
                self.refuse(key.start_mark, f"duplicate key {_shorten(key.value)!r}, first given at line "
                            f"{seen.line + 1}; YAML would silently keep only the last value")

    def construct_yaml_int(self, node: ScalarNode) -> int:
        digits = node.value.lstrip("+-").replace("_", "")
        if len(digits) > _INT_DIGITS:
            self.refuse(node.start_mark, f"an integer of {len(digits)} digits is outside the 64-bit range "
                        "a Kubernetes object can hold")
            return 0
        value = super().construct_yaml_int(node)
        if not INT64[0] <= value <= INT64[1]:
            self.refuse(node.start_mark, f"{_shorten(str(value))} is outside the 64-bit range a Kubernetes "
                        "object can hold")
            return 0
        return int(value)

    def construct_yaml_float(self, node: ScalarNode) -> float:
        value = float(super().construct_yaml_float(node))
        if not math.isfinite(value):
            self.refuse(node.start_mark, f"{_shorten(node.value)!r} is not a finite number; Kubernetes "
                        "objects are JSON, which has no NaN or infinity")
            return 0.0
        return value


_BoundedLoader.add_constructor("tag:yaml.org,2002:int", _BoundedLoader.construct_yaml_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)


def load_documents(text: str, source: str = "<stdin>", limits: Limits = INPUT_LIMITS) -> list[dict[str, Any]]:
    """Parse every YAML document in `text`; each refusal names its line and column."""
    if len(text) > limits.file_bytes:
        raise InvalidInput([Problem(source, f"{len(text)} characters; at most {limits.file_bytes} are accepted")])
    try:
        loader = _BoundedLoader(text, source, limits)
    except yaml.YAMLError as exc:
        raise InvalidInput([Problem(source, f"malformed YAML: {exc}")]) from None
    try:
        docs = []
        seen = 0
        while loader.check_data():  # type: ignore[no-untyped-call]
            seen += 1
            if seen > limits.documents:
                raise InvalidInput([Problem(source, f"more than {limits.documents} YAML documents; at most "
                                                    f"{limits.documents} are accepted in one file: split it")])
            doc = loader.get_data()
            if doc is not None:
                docs.append(doc)
    except _Refusal as exc:
        raise InvalidInput([*loader.findings, Problem(loader.where(exc.mark), exc.message)]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        reason = exc.problem or exc.context
        if reason == _LIBYAML_TOO_DEEP:  # libyaml looks ahead; deeper than its own bound, it stops first
            problem = Problem(loader.where(mark), f"nested more than {limits.depth} levels deep")
        else:
            problem = Problem(loader.where(mark), f"malformed YAML: {reason}")
        raise InvalidInput([*loader.findings, problem]) from None
    except yaml.YAMLError as exc:
        raise InvalidInput([*loader.findings, Problem(source, f"malformed YAML: {exc}")]) from None
    finally:
        loader.dispose()
    problems = loader.findings + [
        Problem(f"{source}[document {i}]", f"expected a mapping, got {type(d).__name__}")
        for i, d in enumerate(docs)
        if not isinstance(d, dict)
    ]
    if problems:
        raise InvalidInput(problems)
    return docs


def _decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            [Problem(source, f"not UTF-8 text (byte {exc.start} is {data[exc.start]:#04x}); is it a binary file?")]
        ) from None


def load_file(path: Path | str, limits: Limits = INPUT_LIMITS) -> list[dict[str, Any]]:
    """Load a YAML file (``-`` for stdin); unreadable, oversized or non-UTF-8 files are refusals."""
    if str(path) == "-":
        import sys

        stream = getattr(sys.stdin, "buffer", None)
        raw = stream.read(limits.file_bytes + 1) if stream is not None else sys.stdin.read().encode()
        source = "<stdin>"
    else:
        source = str(path)
        try:
            with Path(path).open("rb") as handle:
                raw = handle.read(limits.file_bytes + 1)
        except OSError as exc:
            raise InvalidInput([Problem(source, f"cannot read file: {exc.strerror or exc}")]) from None
    if len(raw) > limits.file_bytes:
        raise InvalidInput([Problem(source, f"larger than {limits.file_bytes} bytes; refused unread")])
    return load_documents(_decode(raw, source), source, limits)


class _Dumper(getattr(yaml, "CSafeDumper", yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, multi-line strings as literal blocks: readable, diffable renders. libyaml writes the
    same bytes as PyYAML's own emitter (tests/test_documents.py) in a seventh of the time."""


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
