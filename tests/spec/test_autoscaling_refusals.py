"""Refusals of `NodePool.spec.autoscaling`, from the CLI: exit 2, the field named; Go durations pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import clone, doc, load_example
from tenantctl.cli import app

Docs = list[dict[str, Any]]


def run(tmp_path: Path, docs: Docs, *args: str) -> Any:
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    return CliRunner().invoke(app, [*args, "-f", str(spec)])


def with_autoscaling(autoscaling: dict[str, Any], pool: str = "md0") -> Docs:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "NodePool", pool)["spec"]["autoscaling"] = autoscaling
    return docs


def refused_at(result: Any) -> dict[str, str]:
    assert result.exit_code == 2, result.output
    assert result.stdout == "" and "Traceback" not in result.output
    return dict(line.split(": ", 1) for line in result.stderr.splitlines() if ": " in line)


AUTOSCALING_CASES: dict[str, tuple[Docs, dict[str, str]]] = {
    "zero provision time": (
        with_autoscaling({"maxNodeProvisionTime": "0s"}),
        {"NodePool/md0.spec.autoscaling.maxNodeProvisionTime": "must be positive"},
    ),
    "bare number": (
        with_autoscaling({"maxNodeProvisionTime": "30"}),
        {"NodePool/md0.spec.autoscaling.maxNodeProvisionTime": "'30' is not a Go duration"},
    ),
    "negative provision time": (
        with_autoscaling({"maxNodeProvisionTime": "-5m"}),
        {"NodePool/md0.spec.autoscaling.maxNodeProvisionTime": "'-5m' must be positive"},
    ),
    "empty provision time": (
        with_autoscaling({"maxNodeProvisionTime": ""}),
        {"NodePool/md0.spec.autoscaling.maxNodeProvisionTime": "is not a Go duration"},
    ),
    "autoscaling on a fixed pool": (
        with_autoscaling({"maxNodeProvisionTime": "30m"}, pool="big"),
        {"NodePool/big.spec.autoscaling": "applies only to an autoscaled pool"},
    ),
}


@pytest.mark.parametrize("case", AUTOSCALING_CASES.values(), ids=AUTOSCALING_CASES.keys())
def test_autoscaling_refusal(case: tuple[Docs, dict[str, str]], tmp_path: Path, snapshot: SnapshotAssertion) -> None:
    docs, expected = case
    found = refused_at(run(tmp_path, docs, "render"))
    for path, fragment in expected.items():
        assert path in found, f"no problem at {path}: {found}"
        assert fragment in found[path]
    assert found == snapshot, "every problem, word for word"


@pytest.mark.parametrize("duration", ["30m", "1h30m", "20m0s", "90s", "1.5h"])
def test_go_durations_are_accepted(duration: str, tmp_path: Path) -> None:
    result = run(tmp_path, with_autoscaling({"maxNodeProvisionTime": duration}), "render")
    assert result.exit_code == 0, result.stderr
    assert f"cluster.x-k8s.io/autoscaling-options-maxnodeprovisiontime: {duration}" in result.stdout
