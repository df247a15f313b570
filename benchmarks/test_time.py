"""`make test`'s wall time with warm caches, against issue 41's target of six minutes on 2 cores.

    .venv/bin/python benchmarks/test_time.py

Warm caches: the Go-built binaries (envtest, kubectl, etcdctl, the upstream managers) and mypy's cache are
made first, untimed, by the make targets `make test` depends on; then `make test` runs whole and is timed,
its lint and type check included, as CI and a developer run it, its output echoed as it comes. Run from
`make bench`, the inner make gets none of the outer one's flags: `-i` would turn a failed suite into a
timed one, `-B` would rebuild the virtualenv inside the timing. Exits 1 when the suite fails or the target
is missed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from bench import QUOTED

REPO = Path(__file__).resolve().parents[1]
TARGET_S = 360.0
WARM_UP = ("envtest", "kubectl", "etcdctl", "upstream", "typecheck")
"""What `make test` would otherwise build or fill in its first run: its prerequisites that keep a cache."""
SUMMARY = re.compile(r"\b\d+ (passed|failed|errors?)\b.* in [\d.]+s")
MAKE_STATE = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")
"""What a make running this script passes down to the makes it starts."""


def pytest_summary(output: str) -> str:
    """pytest's last line (`4396 passed in 223.41s`), or what the run printed last when it never got there."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    found = [line for line in lines if SUMMARY.search(line)]
    return (found or lines or ["(no output)"])[-1]


def judged(seconds: float) -> tuple[str, bool]:
    """The verdict line of a green run's wall time, and whether it met the target."""
    ok = seconds <= TARGET_S
    return (f"make test wall time, caches warm: {seconds:.0f}s on {os.cpu_count()} CPUs (target ≤ {TARGET_S:.0f}s) "
            f"{'ok' if ok else 'MISSED'}"), ok


def own_make(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without what an outer make passed down: the timed make runs as `make test` typed."""
    return {k: v for k, v in environ.items() if k not in MAKE_STATE}


def main(argv: Sequence[str] | None = None, repo: Path = REPO) -> int:
    """`repo`: the checkout whose `make test` is timed (a test gives one with a Makefile of its own)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.parse_args(argv)
    env = own_make(os.environ)
    print(f"warming the caches, untimed: make {' '.join(WARM_UP)}", flush=True)
    warm = subprocess.run(["make", "-s", *WARM_UP], cwd=repo, env=env, stdout=subprocess.DEVNULL, check=False)
    if warm.returncode != 0:
        print(f"warming the caches failed: `make {' '.join(WARM_UP)}` exited {warm.returncode}")
        return 1
    started = time.perf_counter()
    output: list[str] = []
    with subprocess.Popen(["make", "--no-print-directory", "test"], cwd=repo, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, encoding="utf-8", errors="replace", bufsize=1) as run:
        assert run.stdout is not None
        for line in run.stdout:
            print(f"{QUOTED}{line}", end="", flush=True)
            output.append(line)
    took = time.perf_counter() - started
    print(f"make test: {pytest_summary(''.join(output))}")
    if run.returncode != 0:
        print(f"make test failed (exit {run.returncode}) after {took:.0f}s: no time to judge")
        return 1
    line, ok = judged(took)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
