"""`spec.backup`: what is refused (each path named, all at once) and what is defaulted."""

from __future__ import annotations

import datetime
from typing import Any

import pytest

from tenant_support import clone, doc, load_example, refused
from tenantctl.spec import parse_tenant_documents
from tenantctl.spec.backup import DEFAULT_SCHEDULE, schedule_period

AT = "TenantCluster/demo.spec.backup"


def with_backup(**backup: Any) -> list[dict[str, Any]]:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"]["backup"] = {
        "s3": {"endpoint": "https://s3.example.com", "bucket": "tenant-backups", "credentialsSecretName": "s3"},
        "encryption": {"keySecretName": "backup-key"},
        **backup,
    }
    return docs


def test_defaults() -> None:
    (cluster,) = parse_tenant_documents(with_backup()).clusters
    backup = cluster.spec.backup
    assert backup is not None
    assert (backup.schedule, backup.keep, backup.suspend) == (DEFAULT_SCHEDULE, 7, False)
    assert (backup.s3.prefix, backup.s3.region) == ("tenantctl/", "us-east-1")
    assert DEFAULT_SCHEDULE == "0 2 * * *"


@pytest.mark.parametrize("schedule", [
    "0 2 * * *", "*/15 * * * *", "0 0 ? * MON", "0 3 1-7 * mon-fri", "@daily", "@hourly", "@weekly", "5 4 * JAN,jul 6",
])
def test_schedules_kubernetes_takes_are_taken(schedule: str) -> None:
    assert parse_tenant_documents(with_backup(schedule=schedule)).clusters[0].spec.backup is not None


@pytest.mark.parametrize("schedule", [
    "0 0 L * *",            # cronsim takes L, robfig (the CronJob controller) does not
    "0 0 * * 1#2",
    "0 0 15W * *",
    "0 0 * * 7",            # robfig's day-of-week is 0-6
    "TZ=UTC 0 2 * * *",     # the API server refuses a TZ in the schedule
    "0 0 2 * * *",          # seconds
    "61 * * * *",
    "@every 1h",
    "",
])
def test_schedules_kubernetes_refuses_are_refused(schedule: str) -> None:
    assert "is not a CronJob schedule" in refused(with_backup(schedule=schedule))[f"{AT}.schedule"]


@pytest.mark.parametrize("keep", [0, 1001])
def test_keep_is_bounded(keep: int) -> None:
    assert f"{AT}.keep" in refused(with_backup(keep=keep))


def test_value_refusals_are_all_named() -> None:
    docs = with_backup()
    backup = doc(docs, "TenantCluster")["spec"]["backup"]
    backup["s3"] = {"endpoint": "s3.example.com/bucket", "bucket": "Bad_Bucket", "prefix": "/abs",
                    "region": "EU West", "credentialsSecretName": "same"}
    backup["encryption"] = {"keySecretName": "same"}
    found = refused(docs)
    assert set(found) == {f"{AT}.s3.endpoint", f"{AT}.s3.bucket", f"{AT}.s3.prefix", f"{AT}.s3.region",
                          f"{AT}.encryption.keySecretName"}
    assert "'Bad_Bucket'" in found[f"{AT}.s3.bucket"]
    assert "must not travel with the bucket's keys" in found[f"{AT}.encryption.keySecretName"]


@pytest.mark.parametrize("bucket", ["ab", "a" * 64, "-lead", "trail-", "two..dots"])
def test_bucket_names_s3_refuses(bucket: str) -> None:
    docs = with_backup()
    doc(docs, "TenantCluster")["spec"]["backup"]["s3"]["bucket"] = bucket
    assert list(refused(docs)) == [f"{AT}.s3.bucket"]


def test_plain_http_is_warned_not_refused() -> None:
    docs = with_backup()
    doc(docs, "TenantCluster")["spec"]["backup"]["s3"]["endpoint"] = "http://127.0.0.1:9000"
    tenant = parse_tenant_documents(docs)
    assert [w.path for w in tenant.warnings if w.path.startswith(AT)] == [f"{AT}.s3.endpoint"]


def test_the_period_is_the_longest_gap() -> None:
    start = datetime.datetime(2026, 1, 1)
    assert schedule_period("0 2 * * *", start) == datetime.timedelta(days=1)
    assert schedule_period("0 2 * * 1-5", start) == datetime.timedelta(days=3)
    assert schedule_period("*/15 * * * *", start) == datetime.timedelta(minutes=15)
    assert schedule_period("@weekly", start) == datetime.timedelta(days=7)
    assert schedule_period("0 0 L * *", start) is None


RESTORE_AT = "TenantCluster/demo.spec.restore"


def with_restore(restore: dict[str, Any], backup: bool = True) -> list[dict[str, Any]]:
    docs = with_backup() if backup else clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"]["restore"] = restore
    return docs


def test_a_restore_defaults_to_the_latest_backup() -> None:
    (cluster,) = parse_tenant_documents(with_restore({"from": {"name": "old"}, "mode": "clone"})).clusters
    assert cluster.spec.restore is not None and cluster.spec.restore.backup == "latest"


def test_restore_refusals_are_all_named() -> None:
    found = refused(with_restore({"from": {"name": "Not_A_Name", "namespace": "Bad NS"}, "backup": "yesterday",
                                  "mode": "clone"}, backup=False))
    assert set(found) == {RESTORE_AT, f"{RESTORE_AT}.from.name", f"{RESTORE_AT}.from.namespace",
                          f"{RESTORE_AT}.backup"}
    assert "needs spec.backup" in found[RESTORE_AT]


def test_a_restore_into_itself_and_an_unknown_mode_are_refused() -> None:
    assert "names this tenant itself" in refused(with_restore({"from": {"name": "demo"}, "mode": "clone"}))[
        f"{RESTORE_AT}.from"]
    assert any(p.startswith(f"{RESTORE_AT}.mode") for p in refused(with_restore({"from": {"name": "x"},
                                                                                "mode": "merge"})))


def test_a_named_backup_object_is_taken() -> None:
    docs = with_restore({"from": {"name": "old"}, "backup": "20261203T020000Z-r1234.tctlbak", "mode": "replace"})
    assert parse_tenant_documents(docs).clusters[0].spec.restore is not None
