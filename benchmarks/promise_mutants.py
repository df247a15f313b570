"""Promise mutants: hand-written breaks of the lines that keep each promise, every one required to be killed.

    .venv/bin/python benchmarks/promise_mutants.py              # run them all; exit 1 on a survivor
    .venv/bin/python benchmarks/promise_mutants.py --promise upgrade-skew   # one promise's
    .venv/bin/python benchmarks/promise_mutants.py --list       # the table, without running

A random mutation sample scores an area but rarely lands on the few lines a user's cluster depends
on most; these mutants are chosen for those lines (docs/testing.md's promise table), kept as data in
`promise_mutants.toml`: the promise, the file, the exact text and its replacement, why a user would
notice, and the suites that must go red. Each runs in a fresh pytest process over a copy of `src/`
with the one change made, put first on the import path; the tree itself is never edited.

A mutant whose text is no longer in its file (or is there more than once) is stale, and fails the run
like a survivor: the line it guarded moved, so the table must move with it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TABLE = Path(__file__).with_name("promise_mutants.toml")
SHARED = Path(os.environ.get("TENANTCTL_SHARED", ROOT.parent / "shared"))
BUDGET = 900.0
"""Seconds one mutant's suites may take; a mutant that makes them hang past it is killed (a hang is noticed)."""


@dataclass(frozen=True)
class Mutant:
    promise: str
    file: str
    find: str
    replace: str
    why: str
    tests: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.promise}: {self.file} {self.find.strip().splitlines()[0][:60]!r}"

    def stale(self) -> str | None:
        """Why the mutant no longer applies to the tree, or None."""
        path = ROOT / self.file
        if not path.is_file():
            return f"{self.file} does not exist"
        count = path.read_text().count(self.find)
        if count != 1:
            return f"its text is {'not' if count == 0 else f'{count} times'} in {self.file}"
        missing = [t for t in self.tests if not (ROOT / t.split("::")[0]).exists()]
        return f"its tests {missing} do not exist" if missing else None


def load(path: Path = TABLE) -> list[Mutant]:
    raw = tomllib.loads(path.read_text())
    return [Mutant(m["promise"], m["file"], m["find"], m["replace"], m["why"], tuple(m["tests"]))
            for m in raw["mutant"]]


def _pytest(tests: Sequence[str], src: Path | None, timeout: float) -> tuple[int | None, str, str]:
    """(exit code or None on a timeout, pytest's last line, its whole output)."""
    env = {**os.environ, "TENANTCTL_SHARED": str(SHARED)}
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:randomly",
           "--snapshot-warn-unused", *tests]
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        partial = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else exc.stdout or ""
        return None, "timed out", partial
    lines = [ln for ln in done.stdout.splitlines() if ln.strip()]
    return done.returncode, lines[-1] if lines else done.stderr.strip()[-200:], done.stdout + done.stderr


def _imports_from(src: Path) -> Path:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run([sys.executable, "-c", "import tenantctl; print(tenantctl.__file__)"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    return Path(out).resolve()


def run_one(mutant: Mutant) -> tuple[str, str]:
    """(verdict, detail): killed, survived, or stale."""
    why = mutant.stale()
    if why is not None:
        return "stale", why
    with tempfile.TemporaryDirectory(prefix="promise-mutant-") as tmp:
        src = Path(tmp) / "src"
        shutil.copytree(ROOT / "src", src, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        target = src / Path(mutant.file).relative_to("src")
        target.write_text(target.read_text().replace(mutant.find, mutant.replace))
        if not _imports_from(src).is_relative_to(src.resolve()):
            return "error", "the mutated copy is not the one imported"
        code, last, _ = _pytest(mutant.tests, src, BUDGET)
    if code is None or code in (1, 2, 3):
        return "killed", last
    if code == 0:
        return "survived", last
    return "error", f"pytest exit {code}: {last}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--promise", action="append", help="only this promise's mutants (repeatable)")
    parser.add_argument("--list", action="store_true", help="print the table and exit")
    parser.add_argument("--jobs", type=int, default=max(1, min(2, os.cpu_count() or 1)))
    args = parser.parse_args(argv)
    mutants = [m for m in load() if not args.promise or m.promise in args.promise]
    if args.list:
        for m in mutants:
            print(f"{m.promise}\t{m.file}\t{m.why}")
        return 0
    if not mutants:
        print("no promise mutant selected", file=sys.stderr)
        return 2
    suites = sorted({t for m in mutants for t in m.tests})
    code, last, output = _pytest(suites, None, BUDGET * 2)
    if code != 0:
        # The whole report: a baseline failure is a flaky test or a broken tree, and its temp dir is gone
        # by the time anyone looks (pytest keeps the last three, and each mutant run makes one).
        print(output, file=sys.stderr)
        print(f"the unmutated tree fails its promise suites ({last}): no verdict would mean anything",
              file=sys.stderr)
        return 1
    started = time.monotonic()
    with ThreadPoolExecutor(args.jobs) as pool:
        verdicts = list(pool.map(run_one, mutants))
    print("| promise | mutant | verdict |")
    print("|---|---|---|")
    for m, (verdict, detail) in zip(mutants, verdicts, strict=True):
        print(f"| {m.promise} | `{m.file}`: {m.why} | **{verdict}** ({detail}) |")
    killed = sum(v == "killed" for v, _ in verdicts)
    print(f"\npromise mutants: {killed} of {len(mutants)} killed in {time.monotonic() - started:.0f} s")
    return 0 if killed == len(mutants) else 1


if __name__ == "__main__":
    raise SystemExit(main())
