"""The judge's verdicts on a fixed corpus of broken objects, word for word.

Each rendered object of both examples is broken one leaf at a time in a few fixed ways (the wrong
type, an out-of-range number, a malformed string, a removed key, an unknown key) and judged alone
against the upstream CRDs and core schemas. The snapshot holds every problem the judge names: its
schema conversion, formats, CEL rules and wording in one place. A verdict that changes is a change a
user of `validate` sees, so it shows in the snapshot's diff.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from syrupy.assertion import SnapshotAssertion

from tenant_support import clone, load_example
from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents
from tenantctl.validate import validate_objects

EXAMPLES = {
    "proxmox": ("proxmox.yaml", "observed-proxmox.yaml"),
    "kubevirt": ("kubevirt.yaml", "observed-kubevirt.yaml"),
}
# Where breaking a leaf says something about the judge (metadata and status are the API server's).
JUDGED_ROOTS = ("spec", "data", "stringData", "rules", "webhooks", "subjects", "roleRef")
MAX_DEPTH = 7


def _leaves(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if len(path) > MAX_DEPTH:
        return
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _leaves(value, (*path, key))
    elif isinstance(node, list):
        for i, value in enumerate(node[:2]):
            yield from _leaves(value, (*path, i))
    else:
        yield path, node


def _broken(value: Any) -> list[tuple[str, Any]]:
    """A leaf's fixed breakages: each a name and the value put in its place."""
    if isinstance(value, bool):
        return [("a string for a bool", "yes")]
    if isinstance(value, int):
        return [("negative", -1), ("huge", 10**12), ("a string for a number", "7")]
    if isinstance(value, str):
        return [("a number for a string", 7), ("malformed", "Not Valid!"), ("empty", "")]
    return [("an object for a scalar", {"x": 1})]


def _at(root: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        root = root[key]
    return root


def _cases(example: str) -> Iterator[tuple[str, dict[str, Any]]]:
    spec, observed = EXAMPLES[example]
    rendered = render_tenant(parse_tenant_documents(load_example(spec)), parse_observed(load_example(observed)))
    for obj in rendered:
        label = f"{obj['kind']}/{obj['metadata']['name']}"
        for root in JUDGED_ROOTS:
            if root not in obj:
                continue
            for path, value in _leaves(obj[root], (root,)):
                where = ".".join(map(str, path))
                for name, replacement in _broken(value):
                    broken = clone([obj])[0]
                    _at(broken, path[:-1])[path[-1]] = replacement
                    yield f"{label} {where} {name}", broken
                broken = clone([obj])[0]
                parent = _at(broken, path[:-1])
                if isinstance(parent, dict):
                    del parent[path[-1]]
                    yield f"{label} {where} removed", broken
            broken = clone([obj])[0]
            if isinstance(broken[root], dict):
                broken[root]["unknownFieldX"] = 1
                yield f"{label} {root}.unknownFieldX added", broken


@pytest.mark.parametrize("example", list(EXAMPLES))
def test_the_judges_verdicts_on_broken_objects(example: str, crd_catalog: Any, snapshot: SnapshotAssertion) -> None:
    verdicts = []
    for case, broken in _cases(example):
        problems = validate_objects([broken], crd_catalog)
        verdicts.append(f"{case}: " + (" | ".join(str(p) for p in problems) if problems else "accepted"))
    assert any(v.endswith("accepted") for v in verdicts) and not all(v.endswith("accepted") for v in verdicts)
    assert "\n".join(verdicts) == snapshot
