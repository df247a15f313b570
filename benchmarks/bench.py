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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from leftovers import adopting, children, end_leftovers

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
    leftovers: list[str] = field(default_factory=list)


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


class Terminated(KeyboardInterrupt):
    """A SIGTERM or SIGHUP to the run, as KeyboardInterrupt is a Ctrl-C: the step is told, the summary printed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def run_step(step: Step, env: dict[str, str], grace: float = SURVIVORS_END_WITHIN) -> Outcome:
    """Run one step with its output (stderr too) echoed line by line; keep its verdict lines. A byte that is
    not UTF-8 is shown replaced: one bad line must not end the run before the later steps and the summary.

    What the step leaves running is ended with it (`leftovers`): a step killed outright (SIGKILL, the OOM
    killer) cannot stop its children, and its operator, still holding the output pipe, would keep this run
    waiting and burn CPU under the next step's figures. The step shares the run's process group, so a Ctrl-C
    or a hangup reaches it as before; a Ctrl-C waits for it to stop its servers, a second one ends it."""
    outcome = Outcome(step)
    _show(f"\n== {step.title} ({' '.join(step.argv)})\n")
    started = time.perf_counter()
    kept = children()
    verdicts: list[str] = []
    with adopting():
        process = subprocess.Popen(
            [sys.executable, *step.argv], cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, encoding="utf-8", errors="replace", bufsize=1,
        )
        assert process.stdout is not None
        echo = threading.Thread(target=_echo, args=(process.stdout, verdicts), daemon=True)
        try:
            echo.start()
            _wait_for(process)
        finally:
            if process.poll() is None:  # a second interrupt, or a failure here: the step ends now
                process.kill()
                process.wait()
            outcome.leftovers = end_leftovers(kept, grace)
            echo.join(grace)
    if echo.is_alive():  # closing the pipe under the blocked reader would block on its lock: left open
        _show("\n(the step's output is still held open: its later lines are not counted)\n")
    else:
        process.stdout.close()
    outcome.verdicts = list(verdicts)
    outcome.status = process.returncode
    outcome.seconds = time.perf_counter() - started
    return outcome


def _wait_for(process: subprocess.Popen[str]) -> None:
    """The step's end. Interrupted, the step is let end first: a Ctrl-C reached it as well, a SIGTERM to the
    run alone is passed on as one; either way it stops what it started before the interrupt goes on."""
    try:
        process.wait()
    except Terminated:
        process.send_signal(signal.SIGINT)
        process.wait()
        raise
    except KeyboardInterrupt:
        process.wait()
        raise


def _echo(stream: Iterable[str], verdicts: list[str]) -> None:
    """Show each line and keep the verdicts, reading on whatever becomes of the output."""
    for line in stream:
        if verdict_of(line) is not None:
            verdicts.append(line.strip())
        _show(line)


def _show(text: str) -> None:
    """Print now. With the output gone (`make bench | head`, a full disk) or unable to encode a character, the
    text is dropped: the steps run on, and the exit status still tells."""
    with contextlib.suppress(OSError, ValueError):
        print(text, end="", flush=True)


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
        if outcome.leftovers:
            answer += f"; it left {len(outcome.leftovers)} running, ended after it: {', '.join(outcome.leftovers)}"
        lines.append(f"  {outcome.step.key:<10} {answer} in {outcome.seconds:.0f}s")
    return lines


def _terminated(signum: int, frame: object) -> None:
    raise Terminated(signum)


STOPPING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
"""What ends a run besides a Ctrl-C (a job's timeout, a closed terminal): the summary is printed all the same."""


def main(argv: Sequence[str] | None = None, steps: Sequence[Step] = STEPS) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--skip", action="append", default=[], choices=[s.key for s in steps],
                        help="leave a step out (repeatable)")
    args = parser.parse_args(argv)
    # Each line as it is printed, not when a buffer fills; written as UTF-8 whatever the locale (`≤`).
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8"}
    outcomes: list[Outcome] = []
    status: int | None = None
    previous = {signum: signal.signal(signum, _terminated) for signum in STOPPING_SIGNALS}
    try:
        try:
            for step in steps:
                if step.key not in args.skip:
                    outcomes.append(run_step(step, env))
        except KeyboardInterrupt as stop:  # the steps that ended keep their verdicts
            status = 128 + stop.signum if isinstance(stop, Terminated) else 130
            _show("\ninterrupted: the steps that ended are listed below\n")
        _show("\n".join(summary(outcomes)) + "\n")
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if status is not None:
        return status
    return 1 if any(o.status != 0 for o in outcomes) else 0


if __name__ == "__main__":
    sys.stdout.reconfigure(errors="replace")  # type: ignore[union-attr]
    sys.exit(main())
