"""Multi-document component YAML as editable chunks: untouched documents keep their upstream bytes.

Patching re-serialises only the documents it changes, so a vendored file differs from the upstream
release by exactly the patched documents — the diff a reviewer reads is the patch, nothing else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from tenantctl.documents import dump_objects

__all__ = ["Manifest", "ManifestError", "parse_manifest"]

# libyaml when present: real component files run to megabytes (CRDs) and are parsed twice per build.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$", re.MULTILINE)


class ManifestError(ValueError):
    """The component file is not YAML a Kubernetes client could apply."""


@dataclass
class _Chunk:
    text: str
    doc: dict[str, Any] | None
    changed: bool = False


@dataclass
class Manifest:
    """Documents of one component file; `text()` rebuilds it, re-dumping only changed documents."""

    _chunks: list[_Chunk]
    _separators: list[str]
    _added: list[dict[str, Any]] = field(default_factory=list)

    @property
    def documents(self) -> list[dict[str, Any]]:
        return [c.doc for c in self._chunks if c.doc is not None] + self._added

    def mark_changed(self, doc: dict[str, Any]) -> None:
        for chunk in self._chunks:
            if chunk.doc is doc:
                chunk.changed = True

    def append(self, doc: dict[str, Any]) -> None:
        self._added.append(doc)

    def text(self) -> str:
        parts: list[str] = []
        for i, chunk in enumerate(self._chunks):
            if i:
                parts.append(self._separators[i - 1])
            parts.append(_dump(chunk.doc) if chunk.changed and chunk.doc is not None else chunk.text)
        out = "".join(parts)
        for doc in self._added:
            if out and not out.endswith("\n"):
                out += "\n"
            out += "---\n" + _dump(doc)
        return out


def _dump(doc: dict[str, Any]) -> str:
    return dump_objects([doc])


def parse_manifest(text: str) -> Manifest:
    """Split on `---` lines and parse each document; malformed YAML raises `ManifestError` with a line."""
    chunks: list[_Chunk] = []
    separators: list[str] = []
    start = 0
    line_offset = 0
    for match in _SEPARATOR.finditer(text):
        chunk_text = text[start : match.start()]
        chunks.append(_Chunk(chunk_text, _load(chunk_text, line_offset)))
        line_offset += chunk_text.count("\n") + 1
        end = match.end() + 1 if text[match.end() : match.end() + 1] == "\n" else match.end()
        separators.append(text[match.start() : end])
        start = end
    tail = text[start:]
    chunks.append(_Chunk(tail, _load(tail, line_offset)))
    return Manifest(chunks, separators)


def _load(text: str, line_offset: int) -> dict[str, Any] | None:
    try:
        doc = yaml.load(text, Loader=_LOADER)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = f"line {mark.line + 1 + line_offset}: " if mark else ""
        raise ManifestError(f"{line}malformed YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ManifestError(f"malformed YAML: {exc}") from None
    if doc is None:
        return None
    if not isinstance(doc, dict):
        raise ManifestError(f"line {line_offset + 1}: expected a Kubernetes object, got {type(doc).__name__}")
    return doc
