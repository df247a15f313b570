"""Render and CLI start-up speed: the targets live here, not in timed unit tests.

    .venv/bin/python benchmarks/render_speed.py [--iterations N]

Prints parse+render time per example and the wall time of `tenantctl --help` (lazy imports keep it
small); exits 1 when a target is missed, so it can gate a release job.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tenantctl.render import render_tenant
from tenantctl.spec import parse_observed, parse_tenant_documents

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# The goal (issue 22): a render under a millisecond. Not met yet (1.8 / 1.2 ms at this commit): the bar stays.
TARGETS_MS = {"render": 1.0, "cli_start": 600.0}


def _docs(name: str) -> list[dict[str, object]]:
    return [d for d in yaml.safe_load_all((EXAMPLES / name).read_text()) if d]


def time_render(iterations: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for example, observed in (("kubevirt.yaml", "observed-kubevirt.yaml"), ("proxmox.yaml", "observed-proxmox.yaml")):
        docs, obs_docs = _docs(example), _docs(observed)
        samples = []
        for _ in range(iterations):
            start = time.perf_counter()
            render_tenant(parse_tenant_documents(docs), parse_observed(obs_docs))
            samples.append((time.perf_counter() - start) * 1000)
        out[example] = statistics.median(samples)
    return out


def time_cli_start(runs: int = 5) -> float:
    exe = Path(sys.executable).with_name("tenantctl")
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([str(exe), "--help"], check=True, capture_output=True)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    failed = False
    for example, ms in time_render(args.iterations).items():
        ok = ms <= TARGETS_MS["render"]
        failed |= not ok
        verdict = "ok" if ok else "MISSED"
        print(f"parse+render {example}: {ms:.2f} ms median (target ≤ {TARGETS_MS['render']} ms) {verdict}")
    start_ms = time_cli_start()
    ok = start_ms <= TARGETS_MS["cli_start"]
    failed |= not ok
    verdict = "ok" if ok else "MISSED"
    print(f"tenantctl --help: {start_ms:.0f} ms median (target ≤ {TARGETS_MS['cli_start']} ms) {verdict}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
