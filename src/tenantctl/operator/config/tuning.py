"""The operator's tunable bounds as flags and environment variables, validated before anything starts.

One table names each flag, its environment variable and the `OperatorSettings` field it sets; the
values are Go-style durations (`90s`, `5m`, `1h30m`), parsed by the same parser as the spec's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass

from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard, ShardError
from tenantctl.problems import Problems
from tenantctl.spec.durations import DurationError, parse_go_duration

__all__ = ["PEERING_ENV", "SHARD_ENV", "TUNABLES", "Tunable", "tune", "tuned_settings"]

SHARD_ENV = "TENANTCTL_SHARD"
PEERING_ENV = "TENANTCTL_PEERING"


@dataclass(frozen=True)
class Tunable:
    flag: str
    env: str
    field: str


TUNABLES: tuple[Tunable, ...] = (
    Tunable("--tenant-unreachable-grace", "TENANTCTL_TENANT_UNREACHABLE_GRACE", "tenant_unreachable_grace"),
    Tunable("--volume-release-timeout", "TENANTCTL_VOLUME_RELEASE_TIMEOUT", "volume_release_timeout"),
    Tunable("--control-plane-timeout", "TENANTCTL_CONTROL_PLANE_TIMEOUT", "control_plane_timeout"),
    Tunable("--cluster-deletion-timeout", "TENANTCTL_CLUSTER_DELETION_TIMEOUT", "cluster_deletion_timeout"),
    Tunable("--helm-release-timeout", "TENANTCTL_HELM_RELEASE_TIMEOUT", "helm_release_timeout"),
    Tunable("--requeue", "TENANTCTL_REQUEUE", "requeue_delay"),
    Tunable("--pool-rollout-timeout", "TENANTCTL_POOL_ROLLOUT_TIMEOUT", "pool_rollout_timeout"),
)


def tuned_settings(
    values: Mapping[str, str | None], shard: str | None = None, base: OperatorSettings | None = None
) -> OperatorSettings:
    """`base` with every given bound (keyed by flag) and the shard applied; all refusals at once."""
    problems = Problems()
    settings = tune(values, shard, base or OperatorSettings(), problems)
    problems.raise_if_errors()
    return settings


def tune(
    values: Mapping[str, str | None], shard: str | None, base: OperatorSettings, problems: Problems
) -> OperatorSettings:
    """`base` with the bounds and the shard that parse; a problem in `problems` for each that does not."""
    changes: dict[str, object] = {}
    for tunable in TUNABLES:
        text = values.get(tunable.flag)
        if text is None:
            continue
        if text != text.strip():
            problems.error(f"{tunable.flag} (${tunable.env})", f"{text!r} has leading or trailing whitespace")
            continue
        try:
            nanos = parse_go_duration(text)
        except DurationError as exc:
            problems.error(f"{tunable.flag} (${tunable.env})", str(exc))
            continue
        if nanos <= 0:
            problems.error(f"{tunable.flag} (${tunable.env})", f"{text!r} must be a positive duration")
            continue
        changes[tunable.field] = nanos / 1_000_000_000
    if shard is not None:
        try:
            changes["shard"] = Shard.parse(shard)
        except ShardError as exc:
            problems.error(f"--shard (${SHARD_ENV})", str(exc))
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]
