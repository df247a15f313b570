"""When a live tenant takes the newer patch behind `version: v1.33`: its patch policy.

A tenantctl release may move the patch its versions table installs for a minor. A new tenant gets
that patch; a live one keeps the patch it runs until its policy moves it — `Manual` (the default:
the user writes the patch, or switches the policy) or `Automatic` inside a weekly maintenance window
(UTC). Moving starts only inside the window; once the control plane has moved, the ordered upgrade
finishes the pools even past the window's end, since a tenant left half-upgraded is the worse state.
A patch is never moved down: a tenant running a newer patch than the table keeps it.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from tenantctl.problems import Problems
from tenantctl.spec.base import SpecModel
from tenantctl.spec.durations import DurationError, parse_go_duration
from tenantctl.spec.versions import KUBERNETES_PATCHES, minor_of, patch_key

__all__ = [
    "DAYS",
    "PatchChoice",
    "PatchUpgrades",
    "PatchWindow",
    "check_patch_upgrades",
    "choose_patch",
    "in_window",
    "patch_policy",
]

Day = Literal["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
DAYS: tuple[Day, ...] = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_NANOS_PER_SECOND = 1_000_000_000
_MIN_WINDOW = 30 * 60
_MAX_WINDOW = 24 * 60 * 60
_HHMM = r"^([01][0-9]|2[0-3]):[0-5][0-9]$"


class PatchWindow(SpecModel):
    days: list[Day] = Field(
        default_factory=lambda: list(DAYS), min_length=1, max_length=7,
        description="Days the window opens (UTC).",
        json_schema_extra={"x-kubernetes-list-type": "set"},
    )
    start: str = Field(pattern=_HHMM, max_length=5, description="`HH:MM`, UTC: when the window opens.")
    duration: str = Field(max_length=32, description="How long it stays open, a Go duration from 30m to 24h.")


class PatchUpgrades(SpecModel):
    policy: Literal["Manual", "Automatic"] = Field(
        default="Manual",
        description="`Manual`: a live tenant keeps its patch until spec.version names another; `Automatic`: "
                    "it takes the table's patch inside `window`.",
    )
    window: PatchWindow | None = Field(default=None, description="Required with `Automatic`.")


MANUAL = PatchUpgrades()


def check_patch_upgrades(at: str, upgrades: PatchUpgrades | None, problems: Problems) -> None:
    if upgrades is None:
        return
    if upgrades.policy == "Automatic" and upgrades.window is None:
        problems.error(f"{at}.window", "required with policy Automatic: a patch moves workers, so say when it may")
    window = upgrades.window
    if window is None:
        return
    if len(set(window.days)) != len(window.days):
        problems.error(f"{at}.window.days", f"{window.days} names a day twice")
    try:
        seconds = parse_go_duration(window.duration) / _NANOS_PER_SECOND
    except DurationError as exc:
        problems.error(f"{at}.window.duration", f"{window.duration!r}: {exc}")
        return
    if not _MIN_WINDOW <= seconds <= _MAX_WINDOW:
        problems.error(f"{at}.window.duration", f"{window.duration!r} is outside 30m..24h: shorter than a "
                                                "control plane's roll, or longer than a day")


def patch_policy(tenant: PatchUpgrades | None, platform: PatchUpgrades | None) -> tuple[PatchUpgrades, str]:
    """The tenant's policy, else the Platform's, else Manual; with where it came from."""
    if tenant is not None:
        return tenant, "spec.patchUpgrades"
    if platform is not None:
        return platform, "the Platform's spec.patchUpgrades"
    return MANUAL, "the default (Manual)"


def in_window(window: PatchWindow, now: datetime.datetime) -> bool:
    """Whether `now` (aware) falls in a window that opened today or on an earlier listed day."""
    now = now.astimezone(datetime.UTC)
    hours, minutes = (int(p) for p in window.start.split(":"))
    length = datetime.timedelta(seconds=parse_go_duration(window.duration) / _NANOS_PER_SECOND)
    for back in (0, 1):
        day = now - datetime.timedelta(days=back)
        if DAYS[day.weekday()] not in window.days:
            continue
        opens = day.replace(hour=hours, minute=minutes, second=0, microsecond=0)
        if opens <= now < opens + length:
            return True
    return False


@dataclass(frozen=True)
class PatchChoice:
    """The patch a tenant is rendered at this pass, and the one it waits for (None: none pending)."""

    version: str
    pending: str | None = None
    why: str = ""


def choose_patch(
    spec_version: str, running: str | None, policy: PatchUpgrades, source: str, now: datetime.datetime
) -> PatchChoice:
    """What `spec_version` means for a tenant whose control plane runs `running` (None: a new tenant)."""
    table = spec_version if spec_version.count(".") == 2 else KUBERNETES_PATCHES[spec_version]
    if spec_version.count(".") == 2 or running is None or minor_of(running) != minor_of(table):
        return PatchChoice(table)  # a patch written out, a new tenant, or a minor change the user asked for
    if patch_key(running) >= patch_key(table):
        return PatchChoice(running)
    if policy.policy == "Manual":
        return PatchChoice(running, table, f"patch policy Manual ({source}): write spec.version: {table}, "
                                           "or set the policy to Automatic with a window")
    assert policy.window is not None, "checked: Automatic has a window"
    if in_window(policy.window, now):
        return PatchChoice(table)
    window = policy.window
    return PatchChoice(running, table, f"patch policy Automatic ({source}): waits for the window "
                                       f"{','.join(window.days)} {window.start} UTC for {window.duration}")
