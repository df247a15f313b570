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

from compat.corpus import CORPUS, REPO, Change, Render, after, changes, document_text, releases, renders
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


def _schema_has(schema: dict[str, Any], path: str) -> bool:
    """Whether a field path (`spec.proxmox.ipv4Config.addresses`, `[*]` for a list's items) names a field of
    the model's JSON schema, aliases as the user writes them."""
    defs = schema.get("$defs", {})
    node: Any = schema
    for part in path.replace("[*]", ".[*]").split("."):
        while True:  # through references and optional unions to the object itself
            if "$ref" in node:
                node = defs[node["$ref"].rsplit("/", 1)[-1]]
            elif "anyOf" in node:
                node = next((n for n in node["anyOf"] if n.get("type") != "null"), node["anyOf"][0])
            else:
                break
        if part == "[*]":
            if "items" not in node:
                return False
            node = node["items"]
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            return False
    return True


def _input_schemas() -> dict[str, dict[str, Any]]:
    from tenantctl.spec import NodePool, ObservedState, TenantCluster

    models = (TenantCluster, NodePool, ObservedState)
    return {model.__name__: model.model_json_schema(by_alias=True) for model in models}


def test_every_changes_entry_names_a_known_release_and_says_why() -> None:
    """Each entry names a release in history order, what it changed as something tenantctl renders or a
    field a user writes, and says why; one that rolls names what rolls (a MachineDeployment's machines or
    the control plane's version)."""
    assert CHANGES, "CHANGES.md has no entries"
    sections = list(dict.fromkeys(change.release for change in CHANGES))
    assert sections == [r for r in ("Unreleased", *reversed(ORDER)) if r in sections], "newest first, as released"
    rendered = {ref.split("/", 1)[0] for render in RENDERS for ref, _ in render.documents} | {
        o["kind"] for name in ("kubevirt.yaml", "proxmox.yaml", "proxmox-spread.yaml")
        for o in _today_kinds(name)}
    schemas = _input_schemas()
    for change in CHANGES:
        assert change.release in (*ORDER, "Unreleased"), change
        assert change.kind in ("render", "refused") and change.targets, change
        if change.kind == "render":
            assert set(change.targets) <= rendered, f"kinds tenantctl never rendered: {set(change.targets) - rendered}"
        else:
            for target in change.targets:
                kind, _, path = target.partition("/*.")
                assert kind in schemas and _schema_has(schemas[kind], path), f"no field {target}"
        if change.rolls:
            assert change.kind == "render" and {"MachineDeployment", "KamajiControlPlane"} & set(change.targets), \
                change
        words = change.why.split()
        assert len(words) >= 8 and not set(words) <= set(change.targets), f"says what, not why: {change}"


def _today_kinds(example: str) -> list[dict[str, Any]]:
    from tenantctl.render import render_tenant
    from tenantctl.spec import parse_observed, parse_tenant_documents

    docs = [d for d in yaml.safe_load_all((REPO / "examples" / example).read_text()) if d]
    observed_file = REPO / "examples" / ("observed-proxmox.yaml" if "proxmox" in example else "observed-kubevirt.yaml")
    observed = [d for d in yaml.safe_load_all(observed_file.read_text()) if d]
    tenant = parse_tenant_documents(docs)
    return render_tenant(tenant, parse_observed(observed))


def test_the_changes_check_refuses_an_entry_that_names_nothing() -> None:
    schemas = _input_schemas()
    assert _schema_has(schemas["NodePool"], "spec.proxmox.network.additionalDevices[*].ipv4.addresses")
    assert not _schema_has(schemas["NodePool"], "spec.proxmox.network.additionalDevice[*].ipv4.addresses")
    assert not _schema_has(schemas["TenantCluster"], "spec.proxmox.ipv4Config.address")


def test_a_rolling_difference_is_not_explained_by_an_entry_that_says_it_does_not_roll() -> None:
    entry = Change("Unreleased", "render", ("MachineDeployment",), False, "metadata only, never the template")
    assert _explained(ORDER[0], "MachineDeployment", True, [entry]) is None
    assert _explained(ORDER[0], "MachineDeployment", False, [entry]) is entry
    assert _explained(ORDER[-1], "Deployment", False, [entry]) is None
