"""Any input of at most 1 MiB is answered within 2 s, whatever its shape, with a bounded report.

Issue 24: a 700 KB file of 100,000 empty documents took 44 s and printed 13.8 MB of errors. The shapes
below are the floods a loader and a checker can be made to multiply: many documents, one huge string,
the widest mapping and list the loader accepts, the deepest nesting, many objects that each fail several
checks. Timed, so they run in `make slow` only (targets live outside the unit tests); the refusal's
exit code and size are checked in both modes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from tenantctl.cli import app

MIB = 1 << 20
BOUND_SECONDS = 2.0
SHOWN = 50  # tenantctl.cli.support prints this many problems, then how many more


def many_documents(n: int) -> str:
    return "--- {}\n" * n


def long_string(n: int) -> str:
    return f"apiVersion: tenantctl.io/v1alpha1\nkind: TenantCluster\nmetadata:\n  name: {'a' * n}\n"


POOL = "apiVersion: tenantctl.io/v1alpha1\nkind: NodePool\nmetadata: {name: p, namespace: n}\nspec:\n"


POOL = "apiVersion: tenantctl.io/v1alpha1\nkind: NodePool\nmetadata: {name: p, namespace: n}\nspec:\n"


def wide_mapping(n: int) -> str:
    labels = "".join(f"    key-{i}.example.com/l{i}: value-{i}\n" for i in range(n))
    return f"{POOL}  labels:\n{labels}"


def long_list(n: int) -> str:
    taints = "".join(f"  - {{key: k{i}, value: v, effect: NoSchedule}}\n" for i in range(n))
    return f"{POOL}  taints:\n{taints}"


def deep(n: int) -> str:
    return "a: " + "[" * n + "]" * n + "\n"


def failing_objects(n: int) -> str:
    one = ("apiVersion: tenantctl.io/v1alpha1\nkind: NodePool\nmetadata: {{name: 'P{i}', namespace: 'N!'}}\n"
           "spec: {{replicas: -1, cluster: '', bogus: 1}}\n---\n")
    return "".join(one.format(i=i) for i in range(n))


SHAPES: dict[str, tuple[Callable[[int], str], int]] = {
    # shape -> (generator, the size that makes it about 1 MiB)
    "100,000 empty documents": (many_documents, 100_000),
    "one string of a million characters": (long_string, MIB - 100),
    "a mapping of 10,000 labels": (wide_mapping, 10_000),
    "a list of 10,000 taints": (long_list, 10_000),
    "64 levels of nesting, and 100,000": (deep, 100_000),
    "1,000 objects failing four checks each": (failing_objects, 1_000),
}


def answer(tmp_path: Path, text: str, command: str) -> tuple[int, str, float]:
    path = tmp_path / "input.yaml"
    path.write_text(text)
    assert path.stat().st_size <= MIB + 4096
    started = time.perf_counter()
    result = CliRunner().invoke(app, [command, "-f", str(path)])
    return result.exit_code, result.output, time.perf_counter() - started


def bounded(exit_code: int, output: str) -> None:
    assert exit_code in (0, 1, 2), output[-2000:]
    assert "Traceback" not in output
    assert len(output.splitlines()) <= SHOWN + 10, f"{len(output.splitlines())} lines"


def full_flood(shape: str, command: str, tmp_path: Path) -> tuple[int, float]:
    """The shape at about 1 MiB, answered with a bounded report: its exit code and seconds."""
    generate, size = SHAPES[shape]
    exit_code, output, took = answer(tmp_path, generate(size), command)
    bounded(exit_code, output)
    return exit_code, took


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", ["validate", "render"])
def test_a_flood_of_one_mebibyte_gets_a_bounded_refusal(shape: str, command: str, tmp_path: Path) -> None:
    assert full_flood(shape, command, tmp_path)[0] == 2


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", ["validate", "render"])
def test_a_flood_of_one_mebibyte_is_answered_within_two_seconds(shape: str, command: str, tmp_path: Path) -> None:
    took = full_flood(shape, command, tmp_path)[1]
    assert took < BOUND_SECONDS, f"{shape}: {took:.2f}s"


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), phases=[Phase.generate])
@given(st.sampled_from(sorted(SHAPES)), st.floats(0.01, 1.0), st.sampled_from(["validate", "render"]))
def test_any_shape_at_any_size_up_to_a_mebibyte_is_answered_within_two_seconds(
    tmp_path_factory: pytest.TempPathFactory, shape: str, fraction: float, command: str
) -> None:
    generate, size = SHAPES[shape]
    exit_code, output, took = answer(tmp_path_factory.mktemp("flood"), generate(max(1, int(size * fraction))), command)
    bounded(exit_code, output)
    assert took < BOUND_SECONDS, f"{shape} at {fraction:.2f}: {took:.2f}s"
