"""What a pass tells its daemon about the next one, and the one way a finding becomes an Event.

A pass ends in one of three ways (`Next`), each with its own pause before the next pass; a finding is
posted as an Event once per change of what it says, never on every pass (`announce`).
"""

from __future__ import annotations

from collections.abc import Hashable
from enum import StrEnum

from tenantctl.operator.phases.events import Recorder

__all__ = ["Next", "announce"]


class Next(StrEnum):
    """When the next pass of a tenant runs (OperatorSettings.requeue_delay_after turns waits into a pause)."""

    RESYNC = "Resync"
    """Converged: the next pass at the resync interval, or when something it watches changes."""
    BACKOFF = "Backoff"
    """Waiting for something or failed: soon, then doubling up to the resync, so a tenant whose address
    takes minutes costs the API little."""
    POLL = "Poll"
    """A stage in progress whose progress wakes no pass (an upgrade, a restore): the plain requeue delay,
    never backing off."""

    def waits_after(self, waits: int) -> int:
        """The daemon's count of waiting passes after a pass that ended this way."""
        if self is Next.RESYNC:
            return 0
        if self is Next.POLL:
            return 1
        return waits + 1


def announce(recorder: Recorder, before: Hashable, now: Hashable, reason: str, message: str, *,
             warning: bool = False) -> bool:
    """Post `reason`/`message` once per change: only when what the finding says now (`now`, as the status
    will record it) differs from what the previous status recorded (`before`). Returns whether it posted."""
    if before == now:
        return False
    if warning:
        recorder.warn(reason, message)
    else:
        recorder.info(reason, message)
    return True
