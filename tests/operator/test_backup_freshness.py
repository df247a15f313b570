"""BackupFresh: read from the backup CronJob's status, stale past twice the schedule's longest gap."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from tenant_support import clone, doc, load_example
from tenantctl.operator.phases.backup_freshness import judge
from tenantctl.operator.runtime.metrics import Metrics
from tenantctl.spec import TenantCluster, parse_tenant_documents

NOW = datetime.datetime(2026, 12, 3, 12, 0, tzinfo=datetime.UTC)


def cluster(schedule: str = "0 2 * * *", **extra: Any) -> TenantCluster:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"]["backup"] = {
        "schedule": schedule, **extra,
        "s3": {"endpoint": "https://s3.example.com", "bucket": "tenant-backups", "credentialsSecretName": "s3"},
        "encryption": {"keySecretName": "key"},
    }
    return parse_tenant_documents(docs).clusters[0]


def cron(last: datetime.datetime | None, created: datetime.datetime = NOW - datetime.timedelta(days=30)) -> Any:
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    status = {"lastSuccessfulTime": last.strftime(stamp)} if last else {}
    return {"metadata": {"creationTimestamp": created.strftime(stamp)}, "status": status}


@pytest.mark.parametrize(("schedule", "age_hours", "fresh"), [
    ("0 2 * * *", 47, True), ("0 2 * * *", 49, False),            # daily: stale past 48 h
    ("0 * * * *", 1.9, True), ("0 * * * *", 2.1, False),          # hourly: past 2 h
    ("0 2 * * 1-5", 143, True), ("0 2 * * 1-5", 145, False),      # weekdays: the weekend is the longest gap
])
def test_stale_is_past_twice_the_longest_gap(schedule: str, age_hours: float, fresh: bool) -> None:
    check = judge(cluster(schedule), cron(NOW - datetime.timedelta(hours=age_hours)), NOW)
    assert check is not None and check.fresh is fresh and check.state == ("fresh" if fresh else "stale")
    assert check.reason == ("BackedUp" if fresh else "BackupStale")


@pytest.mark.parametrize(("schedule", "hours", "fresh"), [
    ("0 2 * * *", 47, True), ("0 2 * * *", 49, False),            # daily: twice 24 h
    ("0 * * * *", 1.9, True), ("0 * * * *", 2.1, False),          # hourly: twice 1 h
    ("0 2 * * 1-5", 143, True), ("0 2 * * 1-5", 145, False),      # weekdays: twice the 72 h weekend
])
def test_none_ever_is_stale_only_once_overdue(schedule: str, hours: float, fresh: bool) -> None:
    """A CronJob that never succeeded is judged by its age against the same limit as a last backup."""
    check = judge(cluster(schedule), cron(None, created=NOW - datetime.timedelta(hours=hours)), NOW)
    assert check is not None and check.fresh is fresh
    if fresh:
        assert (check.reason, check.state) == ("BackupScheduled", "pending")
        assert check.message == f"no backup yet; schedule {schedule!r} (UTC)"
    else:
        assert (check.reason, check.state) == ("BackupStale", "stale")
        assert check.message.startswith("no backup has succeeded in the ")
        assert "since the CronJob was made" in check.message


def test_a_cron_job_without_a_creation_time_is_new_not_overdue() -> None:
    check = judge(cluster(), {"metadata": {}, "status": {}}, NOW)
    assert check is not None and check.fresh and check.state == "pending"


def test_suspended_and_absent() -> None:
    """Suspended: fresh whatever the age, said so; no CronJob yet: pending, not stale; no backup block: None."""
    suspended = judge(cluster(suspend=True), cron(NOW - datetime.timedelta(days=60)), NOW)
    assert suspended is not None
    assert (suspended.fresh, suspended.reason, suspended.state) == (True, "BackupSuspended", "suspended")
    assert suspended.message == "spec.backup.suspend: no backup is scheduled"
    never = judge(cluster(suspend=True), cron(None, created=NOW - datetime.timedelta(days=60)), NOW)
    assert never is not None and never.state == "suspended" and never.fresh
    absent = judge(cluster(), None, NOW)
    assert absent is not None
    assert (absent.fresh, absent.reason, absent.state) == (True, "BackupScheduled", "pending")
    assert absent.message == "the backup CronJob is not applied yet"
    no_backup = parse_tenant_documents(load_example("kubevirt.yaml")).clusters[0]
    assert judge(no_backup, None, NOW) is None
    assert judge(no_backup, cron(None), NOW) is None


def test_the_metric_counts_tenants_by_state() -> None:
    metrics = Metrics()
    metrics.backup_state(("a", "x"), "fresh")
    metrics.backup_state(("a", "y"), "stale")
    metrics.backup_state(("a", "x"), "stale")
    metrics.backup_state(("a", "y"), None)
    text = metrics.exposition().decode()
    assert 'tenantctl_backups{state="stale"} 1.0' in text and 'tenantctl_backups{state="fresh"} 0.0' in text
