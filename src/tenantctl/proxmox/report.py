"""What the doctor found: one row per check and subject, each saying what was seen and what to do."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Report", "Row", "Status"]


class Status(StrEnum):
    PASS = "PASS"
    WARN = "WARN"
    FAIL = "FAIL"


@dataclass(frozen=True)
class Row:
    """One finding; `advice` is empty only on a PASS that needs nothing done."""

    check: str
    subject: str
    status: Status
    seen: str
    advice: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["status"] = str(self.status)
        return out


@dataclass
class Report:
    """Every row of one doctor run, in check order; a FAIL anywhere makes the run fail."""

    rows: list[Row] = field(default_factory=list)

    def extend(self, rows: Iterable[Row]) -> None:
        self.rows.extend(rows)

    @property
    def failed(self) -> bool:
        return any(r.status is Status.FAIL for r in self.rows)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0

    def of(self, check: str) -> list[Row]:
        return [r for r in self.rows if r.check == check]

    def as_dict(self) -> dict[str, Any]:
        counts = {str(s): sum(1 for r in self.rows if r.status is s) for s in Status}
        return {"ok": not self.failed, "counts": counts, "rows": [r.as_dict() for r in self.rows]}
