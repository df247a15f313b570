"""Every spec an earlier release accepted is still accepted, and renders as it did unless CHANGES.md says why.

The corpus (tests/compat, built from the history by hack/compat/build_corpus.py) holds each release's
render of each spec it accepted. Today's render of the same spec is compared document by document with
the text that release printed. A difference must be explained by a CHANGES.md entry of a later release
naming the object's kind; one that rolls workers (a MachineDeployment's machine template, a machine
template's name) or moves the control plane's Kubernetes version must be an entry that says it rolls.
"""

from __future__ import annotations

import functools
import hashlib
from fnmatch import fnmatch
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from compat.corpus import CORPUS, Change, Render, after, changes, document_text, releases, renders
from tenantctl.cli import app

RENDERS = renders()
ORDER = releases()
CHANGES = changes()


def _render_now(render: Render) -> tuple[int, str, str]:
    return _render_pair(render.spec, render.observed)


@functools.cache
def _render_pair(spec: str, observed: str | None) -> tuple[int, str, str]:
    """Today's `tenantctl render` of a corpus spec: once per (spec, observed), however many releases hold it."""
    args = ["render", "-f", str(CORPUS / "specs" / f"{spec}.yaml")]
    if observed is not None:
        args += ["--observed", str(CORPUS / "specs" / f"{observed}.yaml")]
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.stdout, result.stderr


@functools.cache
def _documents(stream: str) -> dict[str, tuple[str, dict[str, Any]]]:
    out = {}
    for text in stream.split("---\n"):
        if text.strip():
            doc = yaml.load(text, Loader=yaml.CSafeLoader)
            meta = doc.get("metadata") or {}
            out[f"{doc['kind']}/{meta.get('namespace', '')}/{meta.get('name')}"] = (text, doc)
    return out


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _template(md: dict[str, Any]) -> Any:
    return (md.get("spec") or {}).get("template")


def _rolls(kind: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> bool:
    """Whether the difference replaces a worker machine or moves the control plane's version."""
    if kind == "MachineDeployment" and old is not None and new is not None:
        return bool(_template(old) != _template(new))
    if kind.endswith("MachineTemplate"):
        return True  # named by its content: a new name is a new template, and its MachineDeployment rolls
    if kind == "KamajiControlPlane" and old is not None and new is not None:
        return bool((old.get("spec") or {}).get("version") != (new.get("spec") or {}).get("version"))
    return False


def _explained(release: str, kind: str, rolls: bool, entries: list[Change]) -> Change | None:
    return next((c for c in entries if c.kind == "render" and kind in c.targets and after(release, c, ORDER)
                 and (c.rolls or not rolls)), None)


def differences(render: Render, stream: str) -> list[tuple[str, bool]]:
    """(key, rolls) of every document today's render prints differently from the release's."""
    now = _documents(stream)
    then = dict(render.documents)
    out = []
    for key in sorted(then.keys() | now.keys()):
        if key in then and key in now and _digest(now[key][0]) == then[key]:
            continue
        old = yaml.load(document_text(then[key]), Loader=yaml.CSafeLoader) if key in then else None
        new = now[key][1] if key in now else None
        out.append((key, _rolls(key.split("/")[0], old, new)))
    return out


def test_the_corpus_holds_every_release_and_both_substrates() -> None:
    assert {r.release for r in RENDERS} == set(ORDER), "a release in releases.txt has no accepted render"
    sources = {r.source for r in RENDERS}
    assert {"examples/proxmox.yaml", "examples/kubevirt.yaml", "examples/proxmox-spread.yaml"} <= sources
    assert any(r.observed for r in RENDERS) and any(not r.observed for r in RENDERS)


@pytest.mark.parametrize("render", RENDERS, ids=lambda r: r.id)
def test_an_accepted_spec_is_accepted_and_renders_as_then_or_changes_says_why(render: Render) -> None:
    code, stdout, stderr = _render_now(render)
    if code != 0:
        refused = [c for c in CHANGES if c.kind == "refused" and after(render.release, c, ORDER)]
        heads = [line.split(": ", 1)[0] for line in stderr.splitlines() if ": " in line]
        paths = [head for head in heads if " " not in head]
        unexplained = [p for p in paths if not any(fnmatch(p, t) for c in refused for t in c.targets)]
        assert code == 2 and paths and not unexplained, (
            f"{render.id} was accepted by {render.release} and is refused today with no CHANGES.md `refused` "
            f"entry for its field:\n{stderr}")
        return
    missing = [(key, rolls) for key, rolls in differences(render, stdout)
               if _explained(render.release, key.split("/")[0], rolls, CHANGES) is None]
    assert not missing, (
        f"{render.id}: rendered differently from release {render.release} with no CHANGES.md entry of a later "
        f"release for: " + ", ".join(f"{k}{' (rolls workers)' if r else ''}" for k, r in missing))


def test_every_changes_entry_names_a_known_release_and_says_why() -> None:
    assert CHANGES, "CHANGES.md has no entries"
    for change in CHANGES:
        assert change.release in (*ORDER, "Unreleased"), change
        assert len(change.why) > 20 and change.targets, change


def test_a_rolling_difference_is_not_explained_by_an_entry_that_says_it_does_not_roll() -> None:
    entry = Change("Unreleased", "render", ("MachineDeployment",), False, "metadata only, never the template")
    assert _explained(ORDER[0], "MachineDeployment", True, [entry]) is None
    assert _explained(ORDER[0], "MachineDeployment", False, [entry]) is entry
    assert _explained(ORDER[-1], "Deployment", False, [entry]) is None
