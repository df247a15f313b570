"""The control-plane presets as the README shows them: one markdown table, every preset in it."""

from __future__ import annotations

from tenantctl.spec.resource_presets import PRESETS, presets_markdown


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
