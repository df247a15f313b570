"""The report for people (a rich table) and for CI (JSON); the data is the same."""

from __future__ import annotations

import json
from typing import TextIO

from tenantctl.proxmox.report import Report, Status

__all__ = ["render_json", "render_table"]

_STYLES = {Status.PASS: "green", Status.WARN: "yellow", Status.FAIL: "bold red"}


def render_json(report: Report) -> str:
    return json.dumps(report.as_dict(), indent=2) + "\n"


def render_table(report: Report, stream: TextIO | None = None) -> None:
    """A table per run; plain text when the stream is not a terminal, so logs stay readable."""
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=True, expand=False)
    for column in ("check", "subject", "status", "seen", "what to do"):
        table.add_column(column, overflow="fold")
    for row in report.rows:
        style = _STYLES[row.status]
        table.add_row(row.check, row.subject, f"[{style}]{row.status}[/{style}]", row.seen, row.advice)
    console = Console(file=stream, highlight=False, width=200 if stream is not None else None)
    console.print(table)
    counts = report.as_dict()["counts"]
    console.print(" ".join(f"{k}: {v}" for k, v in counts.items()))
