"""Whether a tenant's backups keep up with their schedule: read from its backup CronJob's own status.

`lastSuccessfulTime` is written by the CronJob controller when a Job of it completes, so this costs one
read of an object the operator applied, and never the bucket. A backup older than twice the schedule's
longest gap is stale (one missed run is weather, two are a problem); so is none at all once the CronJob
has existed that long.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.operator.kube.client import KubeClient
from tenantctl.operator.phases.conditions import Reason
from tenantctl.render.backup import backup_name
from tenantctl.spec import TenantCluster
from tenantctl.spec.backup import schedule_period

__all__ = ["BackupCheck", "backup_freshness", "judge"]

STALE_AFTER = 2
"""How many of the schedule's longest gaps a backup may be old before it is stale."""


@dataclass(frozen=True)
class BackupCheck:
    fresh: bool
    reason: Reason
    message: str
    state: str
    """For the metric: fresh, stale, suspended or pending (no CronJob yet)."""


def _time(value: Any) -> datetime.datetime | None:
    if not value:
        return None
    return datetime.datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.UTC)


def judge(cluster: TenantCluster, cron_job: Mapping[str, Any] | None, now: datetime.datetime) -> BackupCheck | None:
    backup = cluster.spec.backup
    if backup is None:
        return None
    if backup.suspend:
        return BackupCheck(True, Reason.BACKUP_SUSPENDED, "spec.backup.suspend: no backup is scheduled", "suspended")
    if cron_job is None:
        return BackupCheck(True, Reason.BACKUP_SCHEDULED, "the backup CronJob is not applied yet", "pending")
    period = schedule_period(backup.schedule) or datetime.timedelta(days=1)
    limit = STALE_AFTER * period
    last = _time((cron_job.get("status") or {}).get("lastSuccessfulTime"))
    if last is None:
        since = _time((cron_job.get("metadata") or {}).get("creationTimestamp")) or now
        if now - since > limit:
            return BackupCheck(False, Reason.BACKUP_STALE,
                               f"no backup has succeeded in the {_span(now - since)} since the CronJob was made "
                               f"(schedule {backup.schedule!r}: at most {_span(period)} apart)", "stale")
        return BackupCheck(True, Reason.BACKUP_SCHEDULED, f"no backup yet; schedule {backup.schedule!r} (UTC)",
                           "pending")
    age = now - last
    stamp = last.strftime("%Y-%m-%dT%H:%M:%SZ")
    if age > limit:
        return BackupCheck(False, Reason.BACKUP_STALE, f"the last backup is from {stamp}, {_span(age)} ago: more "
                           f"than twice the schedule's {_span(period)} (see the {backup_name(cluster.metadata.name)} "
                           "Jobs' logs)", "stale")
    return BackupCheck(True, Reason.BACKED_UP, f"last backup {stamp} ({_span(age)} ago)", "fresh")


def _span(delta: datetime.timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    if seconds >= 2 * 86400:
        return f"{seconds / 86400:g} d" if seconds % 8640 == 0 else f"{seconds / 86400:.1f} d"
    if seconds >= 3600:
        return f"{seconds / 3600:g} h" if seconds % 360 == 0 else f"{seconds / 3600:.1f} h"
    return f"{seconds // 60} min"


async def backup_freshness(api: KubeClient, cluster: TenantCluster, now: datetime.datetime) -> BackupCheck | None:
    if cluster.spec.backup is None:
        return None
    res = await api.require("batch/v1", "CronJob")
    cron_job = await api.get(res, backup_name(cluster.metadata.name), cluster.metadata.namespace, ours=True)
    return judge(cluster, cron_job, now)
