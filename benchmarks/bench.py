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
import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
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


SURVIVORS_END_WITHIN = 10.0
"""How long what a step left running gets to end on SIGTERM before SIGKILL."""


def run_step(step: Step, env: dict[str, str], grace: float = SURVIVORS_END_WITHIN) -> Outcome:
    """Run one step with its output (stderr too) echoed line by line; keep its verdict lines. A byte that is
    not UTF-8 is shown replaced: one bad line must not end the run before the later steps and the summary.

    The step runs in a process group of its own, which ends with it: a step killed outright (SIGKILL, the
    OOM killer) cannot stop its children, and one still holding the output pipe (the operator a scale run
    spawned) would keep this run waiting on it, and burning CPU under the next step's figures."""
    outcome = Outcome(step)
    print(f"\n== {step.title} ({' '.join(step.argv)})", flush=True)
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, *step.argv], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        encoding="utf-8", errors="replace", bufsize=1, process_group=0,
    )
    echo = threading.Thread(target=_echo, args=(process, outcome), daemon=True)
    echo.start()
    try:
        process.wait()
    except KeyboardInterrupt:  # the terminal signalled this group only: pass it on, let the step end
        _signal_group(process.pid, signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(grace)
        raise
    finally:
        _end_group(process, grace)
        echo.join(grace)
        if echo.is_alive():  # closing the pipe under the blocked reader would block on its lock: left open
            print("\n(a process outside the step's group still holds its output: not waiting for it)", flush=True)
        else:
            assert process.stdout is not None
            process.stdout.close()
    outcome.status = process.returncode
    outcome.seconds = time.perf_counter() - started
    return outcome


def _echo(process: subprocess.Popen[str], outcome: Outcome) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        print(line, end="", flush=True)
        if verdict_of(line) is not None:
            outcome.verdicts.append(line.strip())


def _signal_group(group: int, signum: int) -> bool:
    """Signal every process left in `group`; False when none is."""
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        return False
    return True


def _end_group(process: subprocess.Popen[str], grace: float) -> None:
    """SIGTERM what is left of a step's group, SIGKILL what is still there after `grace` seconds."""
    group = process.pid
    if not _signal_group(group, signal.SIGTERM):
        return
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        process.poll()  # the step itself, reaped once it ends: unreaped, it would still count as in the group
        if not _signal_group(group, 0):
            return
        time.sleep(0.05)
    _signal_group(group, signal.SIGKILL)
    process.wait()


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


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None, steps: Sequence[Step] = STEPS) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip", action="append", default=[], choices=[s.key for s in steps],
                        help="leave a step out (repeatable)")
    args = parser.parse_args(argv)
    # Each line as it is printed, not when a buffer fills; written as UTF-8 whatever the locale (`≤`).
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
    outcomes: list[Outcome] = []
    interrupted = False
    # A step's group is not this one's: a SIGTERM meant for the run (a job's timeout) reaches it through here.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        for step in steps:
            if step.key not in args.skip:
                outcomes.append(run_step(step, env))
    except KeyboardInterrupt:  # the steps that ended keep their verdicts
        interrupted = True
        print("\ninterrupted: the steps that ended are listed below", flush=True)
    finally:
        signal.signal(signal.SIGTERM, previous)
    print("\n".join(summary(outcomes)), flush=True)
    if interrupted:
        return 130
    return 1 if any(o.status != 0 for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
