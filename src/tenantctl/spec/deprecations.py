"""Spellings an earlier release accepted that a newer one has replaced: one table, read by `validate`,
`plan`, the webhook, the operator's status and docs/spec.md.

A deprecated spelling is never refused for being old: a tenant written for an earlier release keeps
rendering as it did (CHANGES.md), with a warning that names the field, the new spelling, and whether
moving to it rolls workers. Each row says where it is found; the checks that find it live beside the
field's other checks and take their words from here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["DEPRECATIONS", "TALOS_VERSION_TAG", "Deprecation", "deprecation_message", "version_tag"]


@dataclass(frozen=True)
class Deprecation:
    id: str
    field: str
    """Where the old spelling is written, as `Kind spec.path` (docs/spec.md lists it under that field)."""
    old: str
    replacement: str
    since: str
    """The first release whose render uses the new spelling (a commit of hack/compat/releases.txt)."""
    rolls: bool
    """Whether moving to the new spelling replaces the pool's machines (said in the warning)."""
    why: str


TALOS_VERSION_TAG = Deprecation(
    id="talos-version-template-tag",
    field="NodePool spec.proxmox.templateTags",
    old="a tag naming the Talos version (`v1.13.6`, `talos-v1.13.6`)",
    replacement=(
        "tag each template `talos-<version>` and leave the version out of templateTags: tenantctl adds "
        "`talos-<spec.talos.version>` itself, so a Talos upgrade selects the new version's template"
    ),
    since="0ea5e53",
    rolls=True,
    why=(
        "the pool's selector keeps the tags as written, so spec.talos.version never reaches the template "
        "it clones; the new selector names another template, so the pool rolls once, onto the same Talos"
    ),
)

DEPRECATIONS: tuple[Deprecation, ...] = (TALOS_VERSION_TAG,)

_VERSION_TAG = re.compile(r"(talos-)?(v[0-9]+[.][0-9]+([.][0-9]+)?)")


def version_tag(tag: str) -> str | None:
    """The Talos version a template tag names (`v1.13.6`, `talos-v1.13.6`, `v1.13`), None if none."""
    match = _VERSION_TAG.fullmatch(tag)
    return match.group(2) if match else None


def deprecation_message(row: Deprecation, found: str) -> str:
    """The warning for a deprecated spelling: what was found, the new spelling, and what moving costs."""
    cost = ("moving to it rolls the pool's machines once; do it in a maintenance window" if row.rolls
            else "moving to it rolls nothing")
    return f"{found}: deprecated since {row.since} ({row.id}); {row.replacement}; {cost}"
