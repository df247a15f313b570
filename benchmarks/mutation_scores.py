"""Mutation scores per area, from the results mutmut leaves in `mutants/`.

    .venv/bin/python benchmarks/mutation_scores.py sample      # the seeded sample of mutant names
    .venv/bin/python benchmarks/mutation_scores.py report      # the table docs/testing.md quotes
    .venv/bin/python benchmarks/mutation_scores.py survivors   # survivors not judged equivalent

An area is scored over the mutants that were checked: killed (a test failed, or the run hit the timeout
a hang causes), survived, and survivors judged equivalent in `docs/mutation-equivalents.tsv` (mutant
name, tab, why no test can tell it from the original). The score is killed / (killed + survivors not judged equivalent).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "mutants" / "src" / "tenantctl"
EQUIVALENTS = ROOT / "docs" / "mutation-equivalents.tsv"
AREAS = {
    "spec": ("spec/",),
    "render": ("render/",),
    "audit": ("audit.py",),
    "operator (apply, reconcile, teardown)": ("operator/apply.py", "operator/reconcile.py", "operator/teardown.py"),
}
KILLED = {1, 3, 36, 24, -24, 152, 255}
SURVIVED = {0}


def area_of(relative: str) -> str | None:
    for area, prefixes in AREAS.items():
        if relative.startswith(prefixes):
            return area
    return None


def results() -> Iterator[tuple[str, str, int | None]]:
    """(area, mutant name, exit code or None when not checked) for every mutant mutmut generated."""
    for meta in sorted(MUTANTS.rglob("*.py.meta")):
        area = area_of(meta.relative_to(MUTANTS).as_posix())
        if area is None:
            continue
        for name, code in json.loads(meta.read_text())["exit_code_by_key"].items():
            yield area, name, code


def equivalents() -> dict[str, str]:
    if not EQUIVALENTS.exists():
        return {}
    rows = (line.split("\t", 1) for line in EQUIVALENTS.read_text().splitlines() if line and not line.startswith("#"))
    return {name: reason for name, reason in rows}


# Mutants per area in the measured sample; audit is small enough to run whole (`make mutation-sample`).
SAMPLE_SIZES = {
    "operator (apply, reconcile, teardown)": 200,
    "render": 250,
    "spec": 250,
}


def sample(seed: int) -> list[str]:
    """A seeded uniform sample per area: the whole run (about 10,000 mutants) takes most of a day on 2 cores."""
    by_area: dict[str, list[str]] = {}
    for area, name, _ in results():
        by_area.setdefault(area, []).append(name)
    rng = random.Random(seed)
    picked: list[str] = []
    for area, names in by_area.items():
        if area in SAMPLE_SIZES:
            picked += rng.sample(names, SAMPLE_SIZES[area])
    return picked


def report() -> str:
    judged = equivalents()
    counts: dict[str, Counter[str]] = {area: Counter() for area in AREAS}
    for area, name, code in results():
        c = counts[area]
        c["generated"] += 1
        if code in KILLED:
            c["killed"] += 1
        elif code in SURVIVED:
            c["equivalent" if name in judged else "survived"] += 1
        elif code is not None:
            c["other"] += 1
    lines = ["| area | killed | survived | equivalent | score |", "|---|---|---|---|---|"]
    for area, c in counts.items():
        scored = c["killed"] + c["survived"]
        score = f"{100 * c['killed'] / scored:.1f} %" if scored else "not measured"
        lines.append(f"| {area} | {c['killed']} | {c['survived']} | {c['equivalent']} | {score} |")
    lines.append("")
    for area, c in counts.items():
        checked = c["killed"] + c["survived"] + c["equivalent"] + c["other"]
        lines.append(f"{area}: {checked} of {c['generated']} generated mutants checked, {c['other']} without a verdict")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    pick = sub.add_parser("sample", help="print the seeded sample of mutant names (SAMPLE_SIZES per area)")
    pick.add_argument("--seed", type=int, default=14)
    sub.add_parser("report", help="print the score table")
    sub.add_parser("survivors", help="print surviving mutants not judged equivalent")
    args = parser.parse_args()
    if args.command == "sample":
        print("\n".join(sample(args.seed)))
    elif args.command == "report":
        print(report())
    else:
        judged = equivalents()
        print("\n".join(name for _, name, code in results() if code in SURVIVED and name not in judged))
    sys.exit(0)


if __name__ == "__main__":
    main()
