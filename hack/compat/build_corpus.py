"""Build tests/compat: every spec an earlier release accepted, with what that release rendered of it.

For each release in hack/compat/releases.txt the release's own tree is read from git (`git archive`), its
spec inputs collected (the examples, the docs' and README's YAML blocks that hold a TenantCluster), and
each is rendered by that release's own `python -m tenantctl render`, alone and with each of its observed
examples. A spec the release refused is not in the corpus: only what it accepted is a promise.

Stored, content-addressed so a spec unchanged across releases is kept once:
- `specs/<digest>.yaml`: the spec as that release's file held it;
- `documents/<digest>.yaml`: each rendered document's exact text, once however many renders hold it;
- `releases.json`: per release, per accepted (spec, observed) pair, the render as its documents in order,
  each `[kind/namespace/name, digest]`: the whole render can be put back together byte for byte (the
  real-API operator-upgrade test applies one as the live tenant that release left).

Run from the repository root: `.venv/bin/python hack/compat/build_corpus.py` (needs git history).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "compat"
_FENCE = re.compile(r"^```ya?ml\n(.*?)^```", re.S | re.M)


def releases() -> list[tuple[str, str]]:
    rows = []
    for line in (ROOT / "hack/compat/releases.txt").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            sha, _, note = line.partition(" ")
            rows.append((sha, note.strip()))
    return rows


def export(sha: str, into: Path) -> None:
    data = subprocess.run(["git", "archive", sha, "src", "examples", "docs", "README.md"],
                          cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


# The examples again in namespaces of their own: the real-API operator-upgrade test applies these renders
# as a live tenant beside the other tests' (the examples' own namespaces are theirs).
MOVED = {"tenant-acme": "compat-acme", "tenant-demo": "compat-demo"}
MOVED_SUFFIX = "@compat"


def moved(text: str) -> str:
    for old, new in MOVED.items():
        text = re.sub(rf"(?m)^(\s*namespace: ){old}$", rf"\g<1>{new}", text)
    return text


def spec_inputs(tree: Path) -> dict[str, str]:
    """name -> text of every tenant spec the release's examples and docs hold."""
    found: dict[str, str] = {}
    for path in sorted((tree / "examples").glob("*.yaml")):
        text = path.read_text()
        if "kind: TenantCluster" in text:
            found[f"examples/{path.name}"] = text
            if path.name in ("proxmox.yaml", "kubevirt.yaml"):
                found[f"examples/{path.name}{MOVED_SUFFIX}"] = moved(text)
    for doc in sorted([tree / "README.md", *(tree / "docs").glob("*.md")]):
        if not doc.exists():
            continue
        for i, block in enumerate(_FENCE.findall(doc.read_text())):
            if "kind: TenantCluster" in block:
                found[f"{doc.relative_to(tree)}#{i}"] = block
    return found


def observed_inputs(tree: Path) -> dict[str, str]:
    found = {f"examples/{p.name}": p.read_text() for p in sorted((tree / "examples").glob("observed-*.yaml"))}
    return found | {f"{name}{MOVED_SUFFIX}": moved(text) for name, text in found.items()}


def render(tree: Path, spec: str, observed: str | None, work: Path) -> str | None:
    """The release's render of `spec` (stdout), None when the release refused it."""
    spec_file = work / "spec.yaml"
    spec_file.write_text(spec)
    args = [sys.executable, "-m", "tenantctl", "render", "-f", str(spec_file)]
    if observed is not None:
        obs_file = work / "observed.yaml"
        obs_file.write_text(observed)
        args += ["--observed", str(obs_file)]
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(args, cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    return done.stdout if done.returncode == 0 else None


def document_key(doc: dict[str, Any]) -> str:
    meta = doc.get("metadata") or {}
    return f"{doc.get('kind')}/{meta.get('namespace', '')}/{meta.get('name')}"


def documents(stream: str) -> list[tuple[str, str, str]]:
    """Each rendered document as (kind/namespace/name, digest of its exact text, text), in order."""
    out = []
    for text in re.split(r"(?m)^---\n", stream):
        if not text.strip():
            continue
        doc = yaml.safe_load(text)
        if isinstance(doc, dict):
            out.append((document_key(doc), hashlib.sha256(text.encode()).hexdigest()[:24], text))
    return out


def spec_id(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def main() -> None:
    corpus: list[dict[str, Any]] = []
    specs: dict[str, str] = {}
    texts: dict[str, str] = {}
    (OUT / "specs").mkdir(parents=True, exist_ok=True)
    (OUT / "documents").mkdir(parents=True, exist_ok=True)
    for sha, note in releases():
        with tempfile.TemporaryDirectory() as tmp:
            tree, work = Path(tmp) / "tree", Path(tmp) / "work"
            tree.mkdir()
            work.mkdir()
            export(sha, tree)
            observed = observed_inputs(tree)
            accepted = []
            for name, text in spec_inputs(tree).items():
                # An observed state belongs to its cluster's namespace: a moved spec takes the moved ones only.
                matching = [o for o in observed if o.endswith(MOVED_SUFFIX) == name.endswith(MOVED_SUFFIX)]
                for obs_name in (None, *matching):
                    out = render(tree, text, observed[obs_name] if obs_name else None, work)
                    if out is None:
                        continue
                    sid = spec_id(text)
                    specs[sid] = text
                    oid = None
                    if obs_name is not None:
                        oid = spec_id(observed[obs_name])
                        specs[oid] = observed[obs_name]
                    rendered = documents(out)
                    texts.update({digest: text for _, digest, text in rendered})
                    accepted.append({"source": name, "spec": sid, "observedSource": obs_name, "observed": oid,
                                     "documents": [[key, digest] for key, digest, _ in rendered]})
            corpus.append({"release": sha, "note": note, "accepted": accepted})
            print(f"{sha}: {len(accepted)} accepted renders", file=sys.stderr)
    for digest, text in texts.items():
        (OUT / "documents" / f"{digest}.yaml").write_text(text)
    for sid, text in specs.items():
        (OUT / "specs" / f"{sid}.yaml").write_text(text)
    (OUT / "releases.json").write_text(json.dumps(corpus, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
