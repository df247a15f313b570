"""`spec.backup`: when a tenant's control-plane data is exported, where it is kept, and with which key.

The schedule is a CronJob's: five fields or one of the descriptors Kubernetes' parser takes (robfig/cron
`ParseStandard`), in UTC (the CronJob renders `timeZone: Etc/UTC`). What that parser refuses is refused
here (seconds, `L`, `W`, `#`, a `TZ=` prefix, values out of range), so the API server never meets a
schedule tenantctl admitted.
"""

from __future__ import annotations

import datetime
import itertools
import re
from typing import Literal

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec import syntax
from tenantctl.spec.base import SpecModel
from tenantctl.spec.names import is_dns_label, is_dns_subdomain

__all__ = ["BackupSpec", "EncryptionSpec", "RestoreSource", "RestoreSpec", "S3Spec", "check_backup", "check_restore",
           "schedule_period"]

DEFAULT_SCHEDULE = "0 2 * * *"
# robfig/cron v3 parser.go: the descriptors ParseStandard accepts, and what each stands for.
_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *", "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}
_NAMES = "jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec|sun|mon|tue|wed|thu|fri|sat"
_ATOM = rf"(\*|\?|([0-9]+|{_NAMES})(-([0-9]+|{_NAMES}))?)(/[0-9]+)?"
_FIELD = re.compile(rf"^{_ATOM}(,{_ATOM})*$", re.IGNORECASE)
# S3 bucket naming rules (virtual-host safe): 3–63 of a-z 0-9 . -, starting and ending alphanumeric.
_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_PREFIX = re.compile(r"^([A-Za-z0-9!_.*'()-]+/)*$")
_PERIOD_SAMPLES = 400


class S3Spec(SpecModel):
    endpoint: str = Field(max_length=2048, description="S3-compatible endpoint URL (https://host[:port]).")
    bucket: str = Field(max_length=63, description="Bucket the backups go to (it must exist).")
    prefix: str = Field(default="tenantctl/", max_length=512,
                        description="Key prefix; each tenant's backups go under <prefix><namespace>/<name>/.")
    region: str = Field(default="us-east-1", max_length=64, description="Signing region.")
    credentials_secret_name: str = Field(
        max_length=253, json_schema_extra={"pattern": syntax.DNS_SUBDOMAIN},
        description="Secret in the tenant's namespace of the management cluster with AWS_ACCESS_KEY_ID and "
                    "AWS_SECRET_ACCESS_KEY; never rendered into the tenant.",
    )


class EncryptionSpec(SpecModel):
    key_secret_name: str = Field(
        max_length=253, json_schema_extra={"pattern": syntax.DNS_SUBDOMAIN},
        description="Secret in the tenant's namespace holding `key`: 32 random bytes (AES-256-GCM).",
    )


class BackupSpec(SpecModel):
    schedule: str = Field(default=DEFAULT_SCHEDULE, max_length=128,
                          description="Cron schedule in UTC (five fields or @daily, @hourly, ...).")
    keep: int = Field(default=7, ge=1, le=1000, description="How many backups are kept; older ones are pruned.")
    suspend: bool = Field(default=False, description="Stop scheduling backups (the kept ones stay).")
    s3: S3Spec
    encryption: EncryptionSpec


class RestoreSource(SpecModel):
    name: str = Field(max_length=63, description="The TenantCluster the backup was taken of.")
    namespace: str | None = Field(default=None, max_length=63, description="Its namespace (default: this one).")


class RestoreSpec(SpecModel):
    """A new tenant that starts from a backup: the operator holds its control plane at zero replicas and
    its controllers and add-ons back until the import and the scrub are done (docs/backup.md)."""

    from_: RestoreSource = Field(alias="from", description="Whose backup, in this tenant's spec.backup bucket.")
    backup: str = Field(default="latest", max_length=128,
                        description="`latest`, or the object name `tenantctl backup list` shows.")
    mode: Literal["replace", "clone"] = Field(
        description="`replace`: the source's PKI comes back (refused while the source exists); `clone`: new PKI.")


def _five_fields(schedule: str) -> str | None:
    spec = _DESCRIPTORS.get(schedule.strip().lower(), schedule)
    fields = spec.split()
    if len(fields) != 5 or not all(_FIELD.match(f) for f in fields):
        return None
    # robfig's day-of-week is 0-6 (cron's 7 for Sunday is refused there).
    if any(int(n) > 6 for n in re.findall(r"(?<![/0-9])[0-9]+", fields[4])):
        return None
    return " ".join(f.replace("?", "*") for f in fields)


def schedule_period(schedule: str, start: datetime.datetime | None = None) -> datetime.timedelta | None:
    """The longest gap between two runs of `schedule` over its next runs (a year's worth of daily ones);
    None for a schedule that does not parse."""
    from cronsim import CronSim, CronSimError

    fields = _five_fields(schedule)
    if fields is None:
        return None
    begun = (start or datetime.datetime(2026, 1, 1)).replace(tzinfo=None, second=0, microsecond=0)
    try:
        runs = CronSim(fields, begun)
        times = [next(runs) for _ in range(_PERIOD_SAMPLES)]
    except (CronSimError, StopIteration):
        return None
    return max(b - a for a, b in itertools.pairwise(times))


def check_backup(at: str, backup: BackupSpec | None, problems: Problems) -> None:
    if backup is None:
        return
    if schedule_period(backup.schedule) is None:
        problems.error(f"{at}.schedule", f"{backup.schedule!r} is not a CronJob schedule: five fields "
                       "(minute hour day-of-month month day-of-week) or @yearly, @monthly, @weekly, @daily, "
                       "@hourly; no seconds, L, W, # or TZ= (the schedule is in UTC)")
    s3 = backup.s3
    if not re.match(r"^https?://[^\s/?#@]+(:[0-9]{1,5})?/?$", s3.endpoint):
        problems.error(f"{at}.s3.endpoint", f"{s3.endpoint!r} is not an endpoint URL like https://s3.example.com "
                       "(scheme, host and port only; the bucket goes in s3.bucket)")
    elif s3.endpoint.startswith("http://"):
        problems.warn(f"{at}.s3.endpoint", f"{s3.endpoint!r} is plain HTTP: backups are sealed, but the S3 "
                      "credentials travel in signatures anyone on the path can replay")
    if not _BUCKET.match(s3.bucket) or ".." in s3.bucket:
        problems.error(f"{at}.s3.bucket", f"{s3.bucket!r} is not an S3 bucket name (3-63 of a-z, 0-9, '.', '-')")
    if not _PREFIX.match(s3.prefix):
        problems.error(f"{at}.s3.prefix", f"{s3.prefix!r} must be path segments each ending in '/' (or empty), "
                       "of letters, digits and !_.*'()-")
    if not re.match(r"^[a-z0-9-]{1,64}$", s3.region):
        problems.error(f"{at}.s3.region", f"{s3.region!r} is not a region name (a-z, 0-9, '-')")
    for field, name in (("s3.credentialsSecretName", s3.credentials_secret_name),
                        ("encryption.keySecretName", backup.encryption.key_secret_name)):
        if not is_dns_subdomain(name):
            problems.error(f"{at}.{field}", f"{name!r} is not a Secret name (a DNS subdomain)")
    if s3.credentials_secret_name == backup.encryption.key_secret_name:
        problems.error(f"{at}.encryption.keySecretName", f"{backup.encryption.key_secret_name!r} is also the S3 "
                       "credentials Secret: the key that opens the backups must not travel with the bucket's keys")


_BACKUP_OBJECT = re.compile(r"^[0-9]{8}T[0-9]{6}Z-r[0-9]+\.tctlbak$")


def check_restore(at: str, name: str, namespace: str, restore: RestoreSpec | None, backup: BackupSpec | None,
                  problems: Problems) -> None:
    if restore is None:
        return
    if backup is None:
        problems.error(at, "needs spec.backup: the bucket and key the backup is read with (the restored tenant "
                       "keeps backing up there)")
    source = restore.from_
    if not is_dns_label(source.name):
        problems.error(f"{at}.from.name", f"{source.name!r} is not a TenantCluster name (a DNS label)")
    if source.namespace is not None and not is_dns_label(source.namespace):
        problems.error(f"{at}.from.namespace", f"{source.namespace!r} is not a namespace (a DNS label)")
    if restore.backup != "latest" and not _BACKUP_OBJECT.match(restore.backup):
        problems.error(f"{at}.backup", f"{restore.backup!r} is neither `latest` nor a backup object name like "
                       "20261203T020000Z-r1234.tctlbak")
    if (source.name, source.namespace or namespace) == (name, namespace):
        problems.error(f"{at}.from", "names this tenant itself: a restore goes into a new TenantCluster, whose "
                       "datastore prefix is empty")
