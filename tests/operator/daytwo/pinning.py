"""Whole day-two outputs pinned in the running test's snapshot: a test asserts the lines it is about,
the snapshot holds every other word of the tree, plan or report its helper built.

`conftest.py` hands each test's `snapshot` to `pin` (an autouse fixture); the helpers that build an
output (`tree_of`, `plan_of`, `report_of`) call `pin` with its text.
"""

from __future__ import annotations

from syrupy.assertion import SnapshotAssertion

from report_support import report_text

__all__ = ["SNAPSHOTS", "pin", "report_text"]

SNAPSHOTS: list[SnapshotAssertion] = []


def pin(text: str) -> None:
    assert SNAPSHOTS, "pin() outside a test of the day-two suites"
    assert text == SNAPSHOTS[-1]
