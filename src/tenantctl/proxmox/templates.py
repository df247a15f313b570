"""Template selection exactly as capmox v0.7.7 does it, so the doctor predicts what the provider will pick.

capmox (`FindVMTemplateByTags`) lower-cases, sorts and de-duplicates the selector's tags, splits each
template's `tags` on ";" and sorts them, and keeps the templates whose lists are *equal*; anything but
exactly one match fails the machine with "found N VM templates with tags". A template carrying the
selector's tags plus others is therefore not selected; the doctor lists those to explain a zero.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Selection", "select_templates", "selector_tags", "template_tags"]


def selector_tags(tags: Iterable[str]) -> list[str]:
    """The selector as capmox compares it: lower-cased, sorted, duplicates removed."""
    return sorted({t.lower() for t in tags})


def template_tags(raw: str) -> list[str]:
    """A template's tags as capmox compares them: split on ";" and sorted, nothing else."""
    return sorted(raw.split(";"))


@dataclass(frozen=True)
class Selection:
    """`exact` is what capmox selects from; `supersets` carry the selector's tags and more."""

    wanted: list[str]
    exact: list[Mapping[str, Any]]
    supersets: list[Mapping[str, Any]]


def select_templates(tags: Iterable[str], resources: Sequence[Mapping[str, Any]]) -> Selection:
    """Split the cluster's VM resources into exact matches and tag supersets of the selector."""
    wanted = selector_tags(tags)
    exact: list[Mapping[str, Any]] = []
    supersets: list[Mapping[str, Any]] = []
    for vm in resources:
        raw = str(vm.get("tags") or "")
        if not vm.get("template") or not raw:
            continue
        have = template_tags(raw)
        if have == wanted:
            exact.append(vm)
        elif set(wanted) < set(have):
            supersets.append(vm)
    return Selection(wanted, exact, supersets)
