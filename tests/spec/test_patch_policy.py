"""A live tenant's patch moves only as its policy says; a new tenant, a written patch or a new minor as asked."""

from __future__ import annotations

import datetime

import pytest

from tenant_support import clone, doc, load_example, refused
from tenantctl.problems import Problems
from tenantctl.providers.catalogue import load_catalogue
from tenantctl.providers.platform import parse_platform
from tenantctl.spec.patch_policy import (
    MANUAL,
    PatchUpgrades,
    PatchWindow,
    check_patch_upgrades,
    choose_patch,
    in_window,
    patch_policy,
)
from tenantctl.spec.versions import KUBERNETES_PATCHES

TABLE = KUBERNETES_PATCHES["v1.33"]  # the table's patch for the minor
OLDER = "v1.33.8"
NEWER = "v1.33.99"
# A Wednesday, 03:30 UTC.
NOW = datetime.datetime(2026, 12, 2, 3, 30, tzinfo=datetime.UTC)
NIGHTLY = PatchUpgrades(policy="Automatic", window=PatchWindow(days=["Wed"], start="02:00", duration="4h"))


def test_a_new_tenant_gets_the_tables_patch_whatever_the_policy() -> None:
    assert choose_patch("v1.33", None, MANUAL, "x", NOW).version == TABLE
    assert choose_patch("v1.33", None, MANUAL, "x", NOW).pending is None


def test_a_live_tenant_keeps_its_patch_under_manual_and_says_what_waits() -> None:
    choice = choose_patch("v1.33", OLDER, MANUAL, "the default (Manual)", NOW)
    assert (choice.version, choice.pending) == (OLDER, TABLE)
    assert f"write spec.version: {TABLE}" in choice.why and "the default (Manual)" in choice.why


def test_automatic_moves_inside_the_window_and_waits_outside_it() -> None:
    assert choose_patch("v1.33", OLDER, NIGHTLY, "x", NOW) == choose_patch("v1.33", None, MANUAL, "x", NOW)
    later = NOW.replace(hour=6, minute=0)
    choice = choose_patch("v1.33", OLDER, NIGHTLY, "spec.patchUpgrades", later)
    assert (choice.version, choice.pending) == (OLDER, TABLE)
    assert "Wed 02:00 UTC for 4h" in choice.why


def test_a_written_patch_and_a_minor_change_are_what_the_user_asked_for() -> None:
    assert choose_patch("v1.33.10", OLDER, MANUAL, "x", NOW).version == "v1.33.10"
    assert choose_patch("v1.34", OLDER, MANUAL, "x", NOW).version == KUBERNETES_PATCHES["v1.34"]


def test_a_patch_is_never_moved_down() -> None:
    assert choose_patch("v1.33", NEWER, NIGHTLY, "x", NOW).version == NEWER
    assert choose_patch("v1.33", NEWER, MANUAL, "x", NOW).pending is None
    assert choose_patch("v1.33", TABLE, MANUAL, "x", NOW) == choose_patch("v1.33", None, MANUAL, "x", NOW)


@pytest.mark.parametrize(("when", "inside"), [
    (datetime.datetime(2026, 12, 2, 2, 0, tzinfo=datetime.UTC), True),     # opens
    (datetime.datetime(2026, 12, 2, 5, 59, tzinfo=datetime.UTC), True),
    (datetime.datetime(2026, 12, 2, 6, 0, tzinfo=datetime.UTC), False),    # closed
    (datetime.datetime(2026, 12, 2, 1, 59, tzinfo=datetime.UTC), False),
    (datetime.datetime(2026, 12, 3, 3, 0, tzinfo=datetime.UTC), False),    # Thursday
    (datetime.datetime(2026, 12, 1, 22, 30, tzinfo=datetime.timezone(datetime.timedelta(hours=-5))), True),
])
def test_the_window_is_utc_and_half_open(when: datetime.datetime, inside: bool) -> None:
    assert in_window(NIGHTLY.window, when) is inside  # type: ignore[arg-type]


def test_a_window_past_midnight_stays_open_into_the_next_day() -> None:
    late = PatchWindow(days=["Tue"], start="22:00", duration="6h")
    assert in_window(late, datetime.datetime(2026, 12, 2, 3, 0, tzinfo=datetime.UTC))  # Wed 03:00
    assert not in_window(late, datetime.datetime(2026, 12, 2, 4, 0, tzinfo=datetime.UTC))


def test_the_tenants_policy_wins_over_the_platforms_and_manual_is_the_default() -> None:
    assert patch_policy(NIGHTLY, MANUAL) == (NIGHTLY, "spec.patchUpgrades")
    assert patch_policy(None, NIGHTLY) == (NIGHTLY, "the Platform's spec.patchUpgrades")
    assert patch_policy(None, None) == (MANUAL, "the default (Manual)")


@pytest.mark.parametrize(("upgrades", "path", "words"), [
    ({"policy": "Automatic"}, "window", "required with policy Automatic"),
    ({"policy": "Automatic", "window": {"start": "02:00", "duration": "10m"}}, "window.duration", "outside 30m..24h"),
    ({"policy": "Automatic", "window": {"start": "02:00", "duration": "25h"}}, "window.duration", "outside 30m..24h"),
    ({"policy": "Automatic", "window": {"start": "02:00", "duration": "soon"}}, "window.duration", "'soon'"),
    ({"window": {"days": ["Mon", "Mon"], "start": "02:00", "duration": "1h"}}, "window.days", "names a day twice"),
    ({"policy": "Sometimes"}, "policy", "Manual"),
    ({"policy": "Automatic", "window": {"start": "24:00", "duration": "1h"}}, "window.start", "pattern"),
    ({"policy": "Automatic", "window": {"days": ["Someday"], "start": "02:00", "duration": "1h"}}, "window.days[0]",
     "Mon"),
])
def test_a_bad_policy_is_refused_at_its_field(upgrades: dict[str, object], path: str, words: str) -> None:
    docs = clone(load_example("kubevirt.yaml"))
    doc(docs, "TenantCluster")["spec"]["patchUpgrades"] = upgrades
    problems = refused(docs)
    at = f"TenantCluster/demo.spec.patchUpgrades.{path}"
    assert at in problems and words in problems[at], problems


def test_the_platform_takes_the_same_policy_with_the_same_checks() -> None:
    platform = {"apiVersion": "tenantctl.io/v1alpha1", "kind": "Platform", "metadata": {"name": "default"},
                "spec": {"patchUpgrades": {"policy": "Automatic", "window": {"start": "02:00", "duration": "2h"}}}}
    parsed = parse_platform([platform], load_catalogue(), __import__("pathlib").Path("."))
    assert parsed.patch_upgrades is not None and parsed.patch_upgrades.policy == "Automatic"
    problems = Problems()
    check_patch_upgrades("Platform/default.spec.patchUpgrades", PatchUpgrades(policy="Automatic"), problems)
    assert [p.path for p in problems.errors] == ["Platform/default.spec.patchUpgrades.window"]
