"""The reconcile is a declared table (issue 66): docs/operator.md shows that very table, Ready summarises an
explicit list, and the table's module stays short enough to read at once."""

from __future__ import annotations

from pathlib import Path

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.phases import reconcile
from tenantctl.operator.phases.conditions import ConditionType, Reason
from tenantctl.operator.phases.outcome import Next
from tenantctl.operator.phases.scope import Scope
from tenantctl.operator.phases.status import CONDITIONS, READY_FROM, result

REPO = Path(__file__).resolve().parents[2]


def test_the_docs_show_the_table_the_operator_runs() -> None:
    text = (REPO / "docs" / "operator.md").read_text()
    shown = text.split("<!-- phase-table:begin -->\n", 1)[1].split("\n<!-- phase-table:end -->", 1)[0]
    assert shown == reconcile.lifecycle_table()
    for kind in READY_FROM:
        assert str(kind) in text.split("<!-- phase-table:begin -->", 1)[0].rsplit("## Reconcile", 1)[1]


def test_every_phase_is_named_once_and_the_unguarded_ones_come_last() -> None:
    names = [p.name for p in reconcile.PHASES]
    assert len(names) == len(set(names))
    guarded = [p.guarded for p in reconcile.PHASES]
    assert guarded == sorted(guarded, reverse=True), "a guarded phase after an unguarded one"


def test_ready_summarises_conditions_the_table_builds_and_never_itself() -> None:
    built = [kind for kind, _ in CONDITIONS]
    assert set(READY_FROM) <= set(built) and ConditionType.READY not in built
    assert [k for k in built if k in READY_FROM] == list(READY_FROM), "Ready names the first failing in status order"


def test_the_table_module_reads_at_once() -> None:
    assert len((REPO / "src/tenantctl/operator/phases/reconcile.py").read_text().splitlines()) < 150


def test_waits_after_each_way_a_pass_ends() -> None:
    assert [Next.RESYNC.waits_after(4), Next.POLL.waits_after(4), Next.BACKOFF.waits_after(4)] == [0, 1, 5]


class _Told:
    def __init__(self) -> None:
        self.told: list[tuple[str, str]] = []

    def info(self, reason: str, message: str) -> None:
        self.told.append((reason, message))

    def warn(self, reason: str, message: str) -> None:
        self.told.append((reason, message))


def _scope(**fields: object) -> Scope:
    body = {"metadata": {"name": "acme", "namespace": "t", "generation": 4},
            "status": {"observedGeneration": 3, "phase": "Ready"}}
    pool = {"metadata": {"name": "workers", "namespace": "t", "generation": 7},
            "status": {"observedGeneration": 6}}
    scope = Scope(api=None, settings=OperatorSettings(), recorder=_Told(), body=body,  # type: ignore[arg-type]
                  pool_bodies=[pool])
    for key, value in fields.items():
        setattr(scope, key, value)
    return scope


def test_a_failed_pass_keeps_the_observed_generation_of_the_last_that_finished() -> None:
    """As Cluster API: a pass whose API calls failed has not brought the status to this generation."""
    failed = result(_scope(apply_error=(Reason.API_ERROR, "500 boom")))
    assert failed.status["observedGeneration"] == 3 and failed.next is Next.BACKOFF
    assert failed.pool_status["workers"]["observedGeneration"] == 6
    first = result(_scope(apply_error=(Reason.API_ERROR, "500 boom"), body={"metadata": {"generation": 1}}))
    assert "observedGeneration" not in first.status


def test_a_refusal_is_a_verdict_on_this_generation() -> None:
    refused = result(_scope(refusal="spec.version: bad"))
    assert refused.status["observedGeneration"] == 4
    assert refused.pool_status["workers"]["observedGeneration"] == 7
