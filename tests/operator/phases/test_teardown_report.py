"""`status.teardown` as a resumed teardown reads it back: what was freed is kept, nothing is invented."""

from __future__ import annotations

from tenantctl.operator.phases.teardown import TeardownReport


def test_a_teardown_that_freed_nothing_records_no_freed_entry() -> None:
    assert TeardownReport(volumes=["pvc-1"]).as_status() == {"steps": [], "leftovers": [], "volumes": ["pvc-1"]}


def test_what_was_freed_survives_a_restart() -> None:
    before = TeardownReport(volumes=["pvc-1"], freed={"claims": 2, "pods": 1, "volumes": ["pvc-1"]})
    after = TeardownReport.from_status({"teardown": before.as_status()})
    assert (after.volumes, after.freed) == (["pvc-1"], {"claims": 2, "pods": 1, "volumes": ["pvc-1"]})
    assert TeardownReport.from_status({}).freed == {}
