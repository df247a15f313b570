"""docs/testing.md's promise table and benchmarks/promise_mutants.toml stay in step.

`make mutation` runs the promise mutants (too slow for `make test`); this keeps them meaningful between
runs: a promise without a mutant, a mutant of no promise, or a mutant whose line moved all turn red here.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("promise_mutants", REPO / "benchmarks" / "promise_mutants.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("promise_mutants", module)
    spec.loader.exec_module(module)
    return module


def _documented() -> list[str]:
    text = (REPO / "docs" / "testing.md").read_text()
    table = text.split("## Promises and their guards", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z-]+)` \|", table, flags=re.MULTILINE)


def test_every_promise_has_a_mutant_and_every_mutant_a_promise() -> None:
    documented = _documented()
    mutated = {m.promise for m in _runner().load()}
    assert len(documented) == len(set(documented)) >= 7, documented
    assert set(documented) - mutated == set(), "promises in docs/testing.md without a promise mutant"
    assert mutated - set(documented) == set(), "promise mutants of a promise the table does not list"


def test_every_mutant_still_applies_to_its_line() -> None:
    runner = _runner()
    stale = {m.name: m.stale() for m in runner.load() if m.stale() is not None}
    assert stale == {}


def test_every_mutant_changes_its_file() -> None:
    assert [m.name for m in _runner().load() if m.find == m.replace or not m.why or not m.tests] == []


def test_a_moved_line_is_reported_stale(tmp_path: Path) -> None:
    runner = _runner()
    mutant = runner.load()[0]
    moved = runner.Mutant(mutant.promise, mutant.file, mutant.find + "  # moved", mutant.replace, mutant.why,
                          mutant.tests)
    assert moved.stale() == f"its text is not in {mutant.file}"
    twice = runner.Mutant(mutant.promise, mutant.file, "\n", "", mutant.why, mutant.tests)
    assert twice.stale() is not None and "times in" in twice.stale()
