"""`NodePool.spec.autoscaling`: how the cluster-autoscaler treats an autoscaled pool."""

from __future__ import annotations

import re

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec.base import SpecModel

__all__ = ["DEFAULT_MAX_NODE_PROVISION_TIME", "AutoscalingSpec", "check_autoscaling", "duration_seconds"]

DEFAULT_MAX_NODE_PROVISION_TIME = "30m"
# Whole hours, minutes and seconds, compound allowed (`1h30m`, `20m0s`): a subset of Go's syntax on
# purpose. The autoscaler ignores an annotation it cannot parse and silently keeps its own default.
_GO_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


class AutoscalingSpec(SpecModel):
    max_node_provision_time: str = Field(
        default=DEFAULT_MAX_NODE_PROVISION_TIME,
        description="How long a new worker may take to register before the autoscaler gives up on it "
        "(Go duration: 30m, 1h30m).",
    )


def duration_seconds(value: str) -> int | None:
    """Seconds of a `1h30m`-style duration, or None when it is not one."""
    match = _GO_DURATION.match(value)
    if not value or match is None:
        return None
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    return hours * 3600 + minutes * 60 + seconds


def check_autoscaling(at: str, autoscaling: AutoscalingSpec | None, autoscaled: bool, problems: Problems) -> None:
    if autoscaling is None:
        return
    if not autoscaled:
        problems.error(
            f"{at}.spec.autoscaling",
            "applies only to an autoscaled pool (minReplicas/maxReplicas); this pool has a fixed size",
        )
    value = autoscaling.max_node_provision_time
    seconds = duration_seconds(value)
    if seconds is None:
        problems.error(
            f"{at}.spec.autoscaling.maxNodeProvisionTime",
            f"{value!r} is not a duration of whole hours, minutes and seconds (e.g. 30m, 1h30m, 20m0s)",
        )
    elif seconds <= 0:
        problems.error(
            f"{at}.spec.autoscaling.maxNodeProvisionTime",
            f"{value!r} must be positive: a zero timeout gives up on every worker before it boots",
        )
