"""The compatibility corpus (built by hack/compat/build_corpus.py) and CHANGES.md, read for the tests.

A render difference between a release and today is explained by a CHANGES.md entry of a later release
that names the object's kind (and says whether it rolls workers); a refusal by a `refused` entry that
names the field.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "compat"
CHANGES = REPO / "CHANGES.md"
UNRELEASED = "Unreleased"


@dataclass(frozen=True)
class Render:
    release: str
    source: str
    spec: str
    observed_source: str | None
    observed: str | None
    documents: tuple[tuple[str, str], ...]

    @property
    def id(self) -> str:
        return f"{self.release}:{self.source}" + (f"+{Path(self.observed_source).stem}" if self.observed_source else "")

    def spec_path(self) -> Path:
        return CORPUS / "specs" / f"{self.spec}.yaml"

    def observed_path(self) -> Path | None:
        return CORPUS / "specs" / f"{self.observed}.yaml" if self.observed else None

    def objects(self) -> list[dict[str, Any]]:
        return [yaml.safe_load(document_text(digest)) for _, digest in self.documents]


@dataclass(frozen=True)
class Change:
    release: str
    kind: str
    """`render` (objects of `targets` differ) or `refused` (fields in `targets` are now refused)."""
    targets: tuple[str, ...]
    rolls: bool
    why: str


def releases() -> list[str]:
    """Oldest first, as hack/compat/releases.txt lists them."""
    lines = (REPO / "hack" / "compat" / "releases.txt").read_text().splitlines()
    return [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]


def renders() -> list[Render]:
    out = []
    for rel in json.loads((CORPUS / "releases.json").read_text()):
        for e in rel["accepted"]:
            out.append(Render(rel["release"], e["source"], e["spec"], e["observedSource"], e["observed"],
                              tuple((k, d) for k, d in e["documents"])))
    return out


def document_text(digest: str) -> str:
    return (CORPUS / "documents" / f"{digest}.yaml").read_text()


_SECTION = re.compile(r"^## (\S+)", re.M)
_ROW = re.compile(r"^\|\s*(render|refused)\s*\|([^|]*)\|\s*(yes|no)\s*\|(.*)\|\s*$")


def changes(text: str | None = None) -> list[Change]:
    """The entries of CHANGES.md's tables: `| render/refused | targets | rolls yes/no | why |`."""
    text = CHANGES.read_text() if text is None else text
    out: list[Change] = []
    release = None
    for line in text.splitlines():
        section = _SECTION.match(line)
        if section:
            release = section.group(1)
            continue
        row = _ROW.match(line)
        if row and release is not None:
            targets = tuple(t.strip().strip("`") for t in row.group(2).split(",") if t.strip())
            out.append(Change(release, row.group(1), targets, row.group(3) == "yes", row.group(4).strip()))
    return out


def after(release: str, change: Change, order: list[str]) -> bool:
    """Whether `change` came after `release` (so may explain a difference from its render)."""
    if change.release == UNRELEASED:
        return True
    return change.release in order and order.index(change.release) > order.index(release)
