"""Every benchmark of issue 41, one after another, then every target they judged in one list: `make bench`.

    .venv/bin/python benchmarks/bench.py [--skip KEY ...]

Each script exits 1 on a missed target, and the cold `render` misses at its floor in every run: under make,
the first step's exit stopped the rest, so the operator's figures were never printed by `make bench` alone.
This runs every step whatever the one before answered, echoes each step's output as it comes, and ends with
each verdict line the steps printed (a line naming a target, then `ok` or `MISSED`) and each step's exit
status. Exits 1 when any step did, so a release job can still gate on it.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Step:
    key: str
    title: str
    argv: tuple[str, ...]


STEPS: tuple[Step, ...] = (
    Step("render", "parse + render, cold starts", ("benchmarks/render_speed.py",)),
    Step("backup", "backup and restore of 10,000 objects", ("benchmarks/backup_speed.py",)),
    Step("real-api", "1,000 tenants on the real kube-apiserver, and the floor under the create figure",
         ("benchmarks/operator_real_scale.py", "--tenants", "1000", "--floor")),
    Step("shards", "10,000 tenants over 8 shards", ("benchmarks/operator_scale.py", "--tenants", "10000",
                                                    "--shards", "8", "--timeout", "3000")),
    Step("test-time", "`make test`'s wall time", ("benchmarks/test_time.py",)),
)

VERDICT = re.compile(r"\(target\b.*\)\s(ok|MISSED)(?=$|[;,]|\s\()")
"""A line judging a target: `… (target ≤ 20 ms) MISSED`, then the line's end, `;`, `,` or ` (` (a note). Lines
naming a floor say `(no target: …)`; a line judges one target (the last it names), so each has its own line."""


@dataclass
class Outcome:
    step: Step
    status: int = 0
    seconds: float = 0.0
    verdicts: list[str] = field(default_factory=list)


QUOTED = "  | "
"""How a step quotes the output of a run it times (`test_time.py`, pytest's): never the step's own verdicts."""


def verdict_of(line: str) -> str | None:
    """`ok` or `MISSED` when `line` judges a target, else None."""
    if line.startswith(QUOTED):
        return None
    found = VERDICT.search(line)
    return found.group(1) if found else None


def run_step(step: Step, env: dict[str, str]) -> Outcome:
    """Run one step with its output (stderr too) echoed line by line; keep its verdict lines. A byte that is
    not UTF-8 is shown replaced: one bad line must not end the run before the later steps and the summary."""
    outcome = Outcome(step)
    print(f"\n== {step.title} ({' '.join(step.argv)})", flush=True)
    started = time.perf_counter()
    with subprocess.Popen(
        [sys.executable, *step.argv], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        encoding="utf-8", errors="replace", bufsize=1,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if verdict_of(line) is not None:
                outcome.verdicts.append(line.strip())
    outcome.status = process.returncode
    outcome.seconds = time.perf_counter() - started
    return outcome


def summary(outcomes: Sequence[Outcome]) -> list[str]:
    """Every verdict, grouped by step, the missed ones marked; then what each step answered."""
    lines = ["", "== issue 41's targets, as this run measured them"]
    for outcome in outcomes:
        lines.append(f"{outcome.step.title}:")
        lines += [f"  {'MISSED' if verdict_of(v) == 'MISSED' else 'ok':<6}  {v}" for v in outcome.verdicts]
        if not outcome.verdicts:
            lines.append("  (no target judged: see its output above)")
    missed = sum(verdict_of(v) == "MISSED" for o in outcomes for v in o.verdicts)
    judged = sum(len(o.verdicts) for o in outcomes)
    lines.append(f"{judged - missed} of {judged} verdicts ok, {missed} missed")
    for outcome in outcomes:
        answer = "exit 0" if outcome.status == 0 else f"exit {outcome.status}"
        if outcome.status != 0 and not any(verdict_of(v) == "MISSED" for v in outcome.verdicts):
            answer += " without a missed target: it failed, see its output"
        lines.append(f"  {outcome.step.key:<10} {answer} in {outcome.seconds:.0f}s")
    return lines


def main(argv: Sequence[str] | None = None, steps: Sequence[Step] = STEPS) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip", action="append", default=[], choices=[s.key for s in steps],
                        help="leave a step out (repeatable)")
    args = parser.parse_args(argv)
    # Each line as it is printed, not when a buffer fills; written as UTF-8 whatever the locale (`≤`).
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
    outcomes: list[Outcome] = []
    interrupted = False
    try:
        for step in steps:
            if step.key not in args.skip:
                outcomes.append(run_step(step, env))
    except KeyboardInterrupt:  # the steps that ended keep their verdicts
        interrupted = True
        print("\ninterrupted: the steps that ended are listed below", flush=True)
    print("\n".join(summary(outcomes)), flush=True)
    if interrupted:
        return 130
    return 1 if any(o.status != 0 for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
