"""`make bench`'s runner: every step runs whatever the one before answered, and every verdict is listed."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from bench import Step, run_step, summary, verdict_of

# Lines as the benchmarks print them (render_speed, operator_real_scale, operator_scale, test_time).
JUDGED = [
    ("parse+render kubevirt.yaml: 0.60 ms median (target ≤ 0.6 ms; collector thresholds (50000, 20, 10) as the "
     "CLI and operator set them) MISSED", "MISSED"),
    ("tenantctl --help cold: 1.15x `import typer` (target ≤ 1.3x) ok", "ok"),
    ("idle resync (the next, verified): operator CPU per tenant 1.60 ms (target ≤ 3) ok; reads per tenant 0.00; "
     "writes 0 (target 0); 1.00 passes per tenant", "ok"),
    ("  shard 3/8: 1250 tenants, peak 290 MiB (target ≤ 300) ok, CPU 41.0s at create, 2.9 ms", "ok"),
    ("make test wall time, caches warm: 223s on 2 CPUs (target ≤ 360s) MISSED", "MISSED"),
]
NOT_JUDGED = [
    "floor: import typer: 61 ms = 5.2x bare, 0.64x `import typer, pydantic, yaml` (no target: what it costs)",
    "  floor: serialising its rendered objects alone: libyaml dump_all 6.17 ms, msgspec JSON 0.07 ms",
    "operator CPU per tenant at create: 12.3 ms (process start included)",
]


@pytest.mark.parametrize(("line", "verdict"), JUDGED)
def test_a_line_judging_a_target_is_a_verdict(line: str, verdict: str) -> None:
    assert verdict_of(line) == verdict


@pytest.mark.parametrize("line", NOT_JUDGED)
def test_a_floor_or_a_figure_is_not(line: str) -> None:
    assert verdict_of(line) is None


def _script(key: str, lines: list[str], status: int) -> Step:
    code = f"for line in {lines!r}: print(line)\nraise SystemExit({status})"
    return Step(key, f"step {key}", ("-c", code))


def test_every_step_runs_and_the_summary_lists_each_verdict(capfd: pytest.CaptureFixture[str]) -> None:
    env = dict(os.environ)
    first = run_step(_script("a", [JUDGED[0][0], NOT_JUDGED[0]], 1), env)
    second = run_step(_script("b", [JUDGED[1][0]], 0), env)
    broken = run_step(_script("c", ["Traceback (most recent call last):"], 2), env)
    echoed = capfd.readouterr().out
    assert NOT_JUDGED[0] in echoed and "Traceback" in echoed  # each step's output is shown as it comes
    assert (first.status, second.status, broken.status) == (1, 0, 2)
    assert first.verdicts == [JUDGED[0][0]] and second.verdicts == [JUDGED[1][0]] and broken.verdicts == []
    lines = summary([first, second, broken])
    assert f"  MISSED  {JUDGED[0][0]}" in lines
    assert f"  ok      {JUDGED[1][0]}" in lines
    assert "1 of 2 verdicts ok, 1 missed" in lines
    assert any(line.startswith("  c ") and "exit 2 without a missed target: it failed" in line for line in lines)
    assert any(line.startswith("  a ") and "exit 1 in" in line and "failed" not in line for line in lines)
    assert "  (no target judged: see its output above)" in lines


def test_the_test_time_names_pytests_summary_not_makes_last_word() -> None:
    from test_time import pytest_summary

    output = "ruff: All checks passed!\n4396 passed, 3 deselected in 223.41s (0:03:43)\nmake: Leaving directory\n"
    assert pytest_summary(output) == "4396 passed, 3 deselected in 223.41s (0:03:43)"
    assert pytest_summary("2 failed, 4394 passed in 230.02s\n") == "2 failed, 4394 passed in 230.02s"
    assert pytest_summary("mypy: error\n\n") == "mypy: error"  # a run that never reached pytest
