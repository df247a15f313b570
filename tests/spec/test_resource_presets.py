"""The control-plane presets: Cozystack's table, the requests derived from it, and the README's markdown of it."""

from __future__ import annotations

from decimal import Decimal

import pytest

from tenantctl.spec.quantity import parse_quantity
from tenantctl.spec.resource_presets import DEFAULT_PRESETS, PRESETS, presets_markdown


def _cells(row: str) -> list[str]:
    assert row.startswith("|") and row.endswith("|"), row
    return [cell.strip() for cell in row[1:-1].split("|")]


def test_the_preset_table_is_a_markdown_table_of_every_presets_limits() -> None:
    header, separator, *rows = presets_markdown().splitlines()
    series_column, *sizes = _cells(header)
    assert series_column == "series"
    assert _cells(separator) == ["---"] * (1 + len(sizes))
    shown: dict[str, str] = {}
    for row in rows:
        series, *cells = _cells(row)
        shown |= {f"{series.strip('`')}.{size}": cell for size, cell in zip(sizes, cells, strict=True)}
    limits = {name: preset.requirements()["limits"] for name, preset in PRESETS.items()}
    assert shown == {name: f"{limit['cpu']} / {limit['memory']}" for name, limit in limits.items()}
    assert shown["t1.nano"] == "250m / 128Mi" and shown["m1.4xlarge"] == "32 / 256Gi"


def test_default_presets_per_component() -> None:
    assert DEFAULT_PRESETS == {
        "apiServer": "c1.medium", "controllerManager": "t1.micro", "scheduler": "t1.micro", "konnectivity": "t1.micro",
    }


@pytest.mark.parametrize(
    ("name", "cpu", "memory"),
    [
        ("t1.nano", "250m", "128Mi"),
        ("t1.micro", "500m", "256Mi"),
        ("c1.medium", "2", "2Gi"),
        ("s1.small", "1", "2Gi"),
        ("u1.large", "4", "16Gi"),
        ("m1.4xlarge", "32", "256Gi"),
    ],
)
def test_preset_limits_match_cozy_lib(name: str, cpu: str, memory: str) -> None:
    limits = PRESETS[name].requirements()["limits"]
    assert limits == {"cpu": cpu, "memory": memory}


def test_preset_requests_are_a_tenth_of_the_cpu_and_all_of_the_memory() -> None:
    assert len(PRESETS) == 40
    for name, preset in PRESETS.items():
        req = preset.requirements()
        cpu_limit, cpu_request = parse_quantity(req["limits"]["cpu"]), parse_quantity(req["requests"]["cpu"])
        assert cpu_request * 10 == cpu_limit, name
        assert req["requests"]["memory"] == req["limits"]["memory"], name
        assert cpu_request >= Decimal("0.025"), name
