"""Mutation scores per area: a seeded sample of mutmut's mutants, each checked against its area's suites.

    make mutation-sample                                       # generate, map, check the sample, report
    .venv/bin/python benchmarks/mutation_scores.py sample      # the seeded sample of mutant names
    .venv/bin/python benchmarks/mutation_scores.py sample --seed 20261201 --size 30   # a fresh sample
    .venv/bin/python benchmarks/mutation_scores.py run NAME... # check mutants (names also on stdin)
    .venv/bin/python benchmarks/mutation_scores.py report      # the table docs/testing.md quotes
    .venv/bin/python benchmarks/mutation_scores.py sample --seed S --unseen > benchmarks/samples/S.txt
    .venv/bin/python benchmarks/mutation_scores.py report --names benchmarks/samples/S.txt
    .venv/bin/python benchmarks/mutation_scores.py survivors   # survivors not judged equivalent

mutmut 3.8 generates the mutants (`mutants/`) and maps every test to the functions it executes
(`mutants/mutmut-stats.json`). Its own runner re-collects the suite in one process, where parametrized
ids built from the code under test stop matching (pytest exits 4); here each mutant runs in a fresh
pytest process instead, with `MUTANT_UNDER_TEST` naming it, as mutmut's trampolines expect.

A verdict is killed (a test failed, the suite could not load, or the budget a hang exhausts ran out),
survived (no test of the area's suites failed), or survived and judged equivalent in
`docs/mutation-equivalents.tsv` (mutant name, tab, why no test can tell it from the original).
The score is killed / (killed + survivors not judged equivalent).

The map only names the test during which a function first ran: work a module- or session-scoped
fixture does once is credited to whichever test asked first. So a mutant that survives the tests the map
names is checked again against its area's whole suites before it counts as a survivor (tests failing on
the unmutated snapshot deselected, found once per area; `CONFIRM_MARKERS` says which tests run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants"
SHARED = Path(os.environ.get("TENANTCTL_SHARED", ROOT.parent / "shared"))
"""The upstream material tests read. mutmut's copy of the tests sits a level below the checkout, where
their own `../shared` default finds nothing and those tests skip; a skipped test kills no mutant."""
PACKAGE = MUTANTS / "src" / "tenantctl"
VERDICTS = Path(os.environ.get("TENANTCTL_MUTATION_VERDICTS", MUTANTS / "sample-verdicts.json"))
EQUIVALENTS = ROOT / "docs" / "mutation-equivalents.tsv"
SAMPLES = ROOT / "benchmarks" / "samples"
"""Every sample drawn, kept as a names file: each name in them has been looked at."""
AREAS = {
    "spec": ("spec/",),
    "render": ("render/",),
    "audit": ("audit.py",),
    "operator (apply, reconcile, teardown)": (
        "operator/phases/apply.py", "operator/phases/reconcile.py", "operator/phases/teardown.py"
    ),
    "validate": ("validate/",),
    "providers": ("providers/",),
    "proxmox doctor": ("proxmox/",),
    "credentials": ("credentials/",),
    "watch cache": ("operator/kube/cache.py",),
    "day-two readers": ("operator/daytwo/",),
}
# Of the tests mutmut saw executing the mutated function, those in the area's own suites. A kill only
# elsewhere is not counted (the score errs low); a hypothesis property run (~70 s) per mutant would not
# fit the sample into an afternoon.
SUITES = {
    "spec": ("tests/spec/", "tests/hostile/"),
    "render": ("tests/render/", "tests/hostile/"),
    "audit": ("tests/audit/", "tests/hostile/"),
    "operator (apply, reconcile, teardown)": ("tests/operator/",),
    "validate": ("tests/validate/", "tests/spec/test_crd_admission.py", "tests/hostile/"),
    "providers": ("tests/providers/",),
    "proxmox doctor": ("tests/proxmox/",),
    "credentials": ("tests/credentials/", "tests/audit/"),
    "watch cache": ("tests/operator/kube/",),
    "day-two readers": ("tests/operator/daytwo/",),
}
# Mutants per area in the seed-14 sample (history): the first N of a seeded shuffle, so a larger N extends
# it. A fresh measurement gives its own seed and size: a sample no test was written against.
SAMPLE_SIZES = {"audit": 60, "operator (apply, reconcile, teardown)": 50, "render": 70, "spec": 70}
SEED = 14
NO_TESTS, TIMED_OUT, INTERRUPTED, USAGE_ERROR, NO_TESTS_COLLECTED, LOAD_FAILED = 33, 36, 2, 4, 5, 37
# The confirmation over an area's whole suites leaves out the tests that run tenantctl as a child process
# (the crash sweeps, the CLI in a subprocess): minutes of wall time each. A mutant only they would kill
# counts as a survivor: the score errs low.
CONFIRM_MARKERS = "not slow and not process"
KILLED = {1, 3, TIMED_OUT, LOAD_FAILED}


def area_of(relative: str) -> str | None:
    for area, prefixes in AREAS.items():
        if relative.startswith(prefixes):
            return area
    return None


def _area_of_name(name: str) -> str:
    module = name.partition("__mutmut_")[0].rpartition(".")[0].removeprefix("tenantctl.")
    area = area_of(module.replace(".", "/") + ".py")
    assert area is not None, name
    return area


def generated() -> Iterator[tuple[str, str]]:
    """(area, mutant name) for every mutant mutmut generated in the scored areas."""
    for meta in sorted(PACKAGE.rglob("*.py.meta")):
        area = area_of(meta.relative_to(PACKAGE).as_posix())
        if area is not None:
            for name in json.loads(meta.read_text())["exit_code_by_key"]:
                yield area, name


def _kept_samples() -> set[str]:
    return {line.strip() for path in SAMPLES.glob("*.txt") for line in path.read_text().splitlines() if line.strip()}


def sample(seed: int = SEED, size: int | None = None, areas: Sequence[str] = (), unseen: bool = False) -> list[str]:
    """The first `size` (else SAMPLE_SIZES) of each area's mutants in a `seed`ed shuffle; `areas` limits
    it, and an area named with `size` 0 is taken whole (the full run that checks a sample's estimate).
    `unseen` leaves out every mutant that already has a verdict, was judged equivalent or is in a kept
    sample (a run may have recorded its verdicts in a file of its own): no test can have been written
    against the rest. Such a sample depends on the verdicts at the time, so it is kept as a names file."""
    seen = {*verdicts(), *equivalents(), *_kept_samples()} if unseen else set()
    by_area: dict[str, list[str]] = {}
    for area, name in generated():
        if (not areas or area in areas) and name not in seen:
            by_area.setdefault(area, []).append(name)
    rng = random.Random(seed)
    picked: list[str] = []
    for area in sorted(by_area):
        names = sorted(by_area[area])
        rng.shuffle(names)
        count = SAMPLE_SIZES.get(area, 30) if size is None else size or len(names)
        picked += names[:count]
    rng.shuffle(picked)
    return picked


def verdicts() -> dict[str, int]:
    return json.loads(VERDICTS.read_text()) if VERDICTS.exists() else {}


def equivalents() -> dict[str, str]:
    if not EQUIVALENTS.exists():
        return {}
    rows = (line.split("\t", 1) for line in EQUIVALENTS.read_text().splitlines() if line and not line.startswith("#"))
    return {name: reason for name, reason in rows}


def _env(mutant: str | None = None) -> dict[str, str]:
    """The environment of a pytest run in the mutants' tree: its sources, the shared material, the mutant."""
    env = {**os.environ, "PYTHONPATH": "src", "TENANTCTL_SHARED": str(SHARED)}
    if mutant is not None:
        env["MUTANT_UNDER_TEST"] = mutant
    return env


def check(name: str, tests: Sequence[str], budget: float, broken: Sequence[str] = (), markers: str = "not slow") -> int:
    """pytest's exit code for `tests` with mutant `name` active (`broken` deselected), or TIMED_OUT."""
    env = _env(name)
    command = [sys.executable, "-m", "pytest", "-x", "-q", "--tb=no", "--no-header", "-p", "no:cacheprovider",
               "-m", markers, *(f"--deselect={t}" for t in broken), *tests]
    try:
        done = subprocess.run(command, cwd=MUTANTS, env=env, capture_output=True, timeout=budget, check=False)
    except subprocess.TimeoutExpired:
        return TIMED_OUT
    if done.returncode == USAGE_ERROR and any("::" in t for t in tests):
        # Ids of tests parametrized from the mutated code change with it: run their whole modules instead.
        return check(name, sorted({t.partition("::")[0] for t in tests}), budget, broken, markers)
    output = done.stdout + done.stderr
    if done.returncode == USAGE_ERROR and b"ImportError while loading conftest" in output:
        return LOAD_FAILED  # the suite cannot even load with the mutant: every test of it would fail
    if done.returncode == INTERRUPTED and b"error during collection" in output:
        return LOAD_FAILED  # a test module's import-time cases raise with the mutant (the baseline collects)
    return done.returncode


class SnapshotBaseline:
    """Per area, the tests that fail on the unmutated snapshot and the wall time of its whole suites."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._found: dict[str, tuple[list[str], float]] = {}

    def of(self, area: str) -> tuple[list[str], float]:
        with self._lock:
            if area not in self._found:
                started = time.monotonic()
                done = subprocess.run(
                    [sys.executable, "-m", "pytest", "-q", "-rfE", "--tb=no", "--no-header", "-p", "no:cacheprovider",
                     "-m", CONFIRM_MARKERS, *SUITES[area]],
                    cwd=MUTANTS, env=_env(""),
                    capture_output=True, text=True, check=False)
                failing = [line.split(" ", 1)[1].split(" - ", 1)[0] for line in done.stdout.splitlines()
                           if line.startswith(("FAILED ", "ERROR "))]
                self._found[area] = (failing, time.monotonic() - started)
                print(f"baseline of {area}: {len(failing)} failing on the snapshot, "
                      f"{self._found[area][1]:.0f}s", flush=True)
            return self._found[area]


def unmapped_tests(known: set[str]) -> tuple[list[str], list[str]]:
    """Tests of the checkout that mutmut's map does not know (added since it ran): those that pass on the
    unmutated snapshot, which every mutant of their area runs, and those that fail there, which none may.
    Tests that run tenantctl as a child process (`process`) are left out: mutmut's map never names them,
    as it cannot see into the child, and a mutant running them all would take minutes."""
    for copied in ("tests", "examples", "docs"):
        shutil.copytree(ROOT / copied, MUTANTS / copied, dirs_exist_ok=True)
    shutil.copy2(ROOT / "pyproject.toml", MUTANTS / "pyproject.toml")  # the markers the tests carry
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "-m", "not slow and not process",
                             *sorted({s for suites in SUITES.values() for s in suites})],
                            cwd=MUTANTS, env=_env(), capture_output=True, text=True,
                            check=False)
    if listed.returncode not in (0, NO_TESTS_COLLECTED):
        raise SystemExit(f"the checkout's tests do not collect on the snapshot:\n{listed.stdout[-2000:]}")
    added = [line for line in listed.stdout.splitlines() if line.startswith("tests/") and line not in known]
    if not added:
        return [], []
    # Only those that pass on the unmutated code of the snapshot can tell a mutant from it.
    baseline = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rA", "--tb=no", "-p", "no:cacheprovider",
                               *added], cwd=MUTANTS, env=_env(""),
                              capture_output=True, text=True, check=False)
    passing = {line.removeprefix("PASSED ") for line in baseline.stdout.splitlines() if line.startswith("PASSED ")}
    return [t for t in added if t in passing], [t for t in added if t not in passing]


def run(names: Sequence[str], workers: int, again: bool) -> None:
    """Check each mutant not yet judged, cheapest tests first, recording verdicts as they come."""
    if not (SHARED / "crds").is_dir():
        raise SystemExit(f"no upstream CRDs at {SHARED}/crds: set TENANTCTL_SHARED; without them the tests that "
                         "judge renders skip, and every mutant only they would kill survives")
    stats = json.loads((MUTANTS / "mutmut-stats.json").read_text())
    tests_of, seconds = stats["tests_by_mangled_function_name"], stats["duration_by_test"]
    added, broken = unmapped_tests(set(seconds))
    recorded = verdicts()
    todo = [n for n in names if again or n not in recorded]

    baseline = SnapshotBaseline()

    def one(name: str) -> tuple[str, int]:
        area = _area_of_name(name)
        suites = SUITES[area]
        executing = tests_of.get(name.partition("__mutmut_")[0], ())
        # No test of the area is seen executing a function that runs at import (tables of rules and
        # images) or only under other suites (the README's tables): the area's suites run in full, then
        # those other tests.
        mapped = [t for t in executing if t.startswith(suites)] or [*suites, *executing]
        tests = [*(t for t in added if t.startswith(suites)), *sorted(mapped, key=lambda t: seconds.get(t, 0.0))]
        code = check(name, tests, budget=60 + 5 * sum(seconds.get(t, 0.0) for t in tests), broken=broken) \
            if tests else NO_TESTS
        if code in (0, NO_TESTS) and set(mapped) != set(suites):
            failing, wall = baseline.of(area)
            code = check(name, list(suites), budget=120 + 3 * wall, broken=[*broken, *failing], markers=CONFIRM_MARKERS)
        return name, code

    started = time.monotonic()
    with ThreadPoolExecutor(workers) as pool:
        for done, (name, code) in enumerate(pool.map(one, todo), start=1):
            recorded[name] = code
            VERDICTS.write_text(json.dumps(recorded, indent=1, sort_keys=True))
            print(f"{done}/{len(todo)} {time.monotonic() - started:6.0f}s exit {code} {name}", flush=True)


def report(only: set[str] | None = None) -> str:
    """The table over the recorded verdicts (`only`: of these mutants, e.g. one seed's sample)."""
    judged, recorded = equivalents(), verdicts()
    if only is not None:
        recorded = {n: c for n, c in recorded.items() if n in only}
    counts: dict[str, Counter[str]] = {area: Counter() for area in AREAS}
    for area, name in generated():
        c = counts[area]
        c["generated"] += 1
        code = recorded.get(name)
        if code is None:
            continue
        c["checked"] += 1
        if code in KILLED:
            c["killed"] += 1
        elif code in (0, NO_TESTS):
            c["equivalent" if name in judged else "survived"] += 1
    lines = ["| area | killed | survived | equivalent | score |", "|---|---|---|---|---|"]
    for area, c in counts.items():
        scored = c["killed"] + c["survived"]
        score = f"{100 * c['killed'] / scored:.1f} %" if scored else "not measured"
        lines.append(f"| {area} | {c['killed']} | {c['survived']} | {c['equivalent']} | {score} |")
    lines.append("")
    for area, c in counts.items():
        other = c["checked"] - c["killed"] - c["survived"] - c["equivalent"]
        lines.append(f"{area}: {c['checked']} of {c['generated']} mutants checked, {other} without a verdict")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sampling = sub.add_parser("sample", help="print the seeded sample of mutant names (SAMPLE_SIZES per area)")
    sampling.add_argument("--seed", type=int, default=SEED)
    sampling.add_argument("--size", type=int, default=None, help="mutants per area (0: every mutant)")
    sampling.add_argument("--area", action="append", default=[], help="only this area (repeatable)")
    sampling.add_argument("--unseen", action="store_true", help="leave out mutants already seen")
    checking = sub.add_parser("run", help="check the named mutants (or names on stdin) and record the verdicts")
    checking.add_argument("names", nargs="*")
    checking.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    checking.add_argument("--again", action="store_true", help="check mutants that already have a verdict")
    reporting = sub.add_parser("report", help="print the score table")
    reporting.add_argument("--seed", type=int, default=None, help="score only this seed's sample")
    reporting.add_argument("--size", type=int, default=None)
    reporting.add_argument("--area", action="append", default=[])
    reporting.add_argument("--names", type=Path, default=None, help="score only the mutants named in this file")
    sub.add_parser("survivors", help="print surviving mutants not judged equivalent")
    args = parser.parse_args()
    if args.command == "sample":
        print("\n".join(sample(args.seed, args.size, args.area, args.unseen)))
    elif args.command == "run":
        run(args.names or sys.stdin.read().split(), args.workers, args.again)
    elif args.command == "report":
        only = None if args.seed is None else set(sample(args.seed, args.size, args.area))
        if args.names is not None:
            named = set(args.names.read_text().split())
            only = named if only is None else only & named
        print(report(only))
    else:
        judged = equivalents()
        print("\n".join(n for n, code in sorted(verdicts().items()) if code in (0, NO_TESTS) and n not in judged))


if __name__ == "__main__":
    main()
