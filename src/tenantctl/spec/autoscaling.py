"""`NodePool.spec.autoscaling`: how the cluster-autoscaler treats an autoscaled pool."""

from __future__ import annotations

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec import syntax
from tenantctl.spec.base import SpecModel
from tenantctl.spec.durations import DurationError, parse_go_duration

__all__ = ["DEFAULT_MAX_NODE_PROVISION_TIME", "AutoscalingSpec", "check_autoscaling"]

DEFAULT_MAX_NODE_PROVISION_TIME = "30m"


class AutoscalingSpec(SpecModel):
    max_node_provision_time: str = Field(
        default=DEFAULT_MAX_NODE_PROVISION_TIME,
        max_length=32,
        json_schema_extra={"pattern": syntax.GO_DURATION},
        description="How long a new worker may take to register before the autoscaler gives up on it "
        "(Go duration: 30m, 1h30m).",
    )


def check_autoscaling(at: str, autoscaling: AutoscalingSpec | None, autoscaled: bool, problems: Problems) -> None:
    """The autoscaler ignores an annotation it cannot parse and keeps its own default without a word,
    so the value is parsed here exactly as Go does."""
    if autoscaling is None:
        return
    if not autoscaled:
        problems.error(
            f"{at}.spec.autoscaling",
            "applies only to an autoscaled pool (minReplicas/maxReplicas); this pool has a fixed size",
        )
    value = autoscaling.max_node_provision_time
    field = f"{at}.spec.autoscaling.maxNodeProvisionTime"
    try:
        nanos = parse_go_duration(value)
    except DurationError as exc:
        problems.error(field, str(exc))
        return
    if nanos <= 0:
        problems.error(field, f"{value!r} must be positive: a zero timeout gives up on every worker before it boots")
