"""The day-two suites share helpers module to module (the doctor's complete cluster): importable by name."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(autouse=True)
def pinned_outputs(snapshot: SnapshotAssertion) -> Iterator[None]:
    """Every tree, plan and report a helper of these suites builds is pinned in the test's snapshot."""
    from pinning import SNAPSHOTS

    SNAPSHOTS.append(snapshot)
    yield
    SNAPSHOTS.pop()
