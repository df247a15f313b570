"""Go durations as Cluster API parses them: every accepted form, and what Go itself refuses."""

from __future__ import annotations

import pytest

from tenantctl.spec.durations import DurationError, format_go_duration, format_seconds, parse_go_duration

S = 1_000_000_000


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("90s", 90),
        ("20m", 1200),
        ("20m0s", 1200),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("1h0m0s", 3600),
        ("2h", 7200),
        (".5m", 30),
        ("5.m", 300),
        ("1h1m1s", 3661),
        ("+5m", 300),
        ("-5m", -300),
        ("0", 0),
        ("0s", 0),
        ("-0", 0),
    ],
)
def test_go_durations_in_seconds_and_hours(text: str, seconds: int) -> None:
    assert parse_go_duration(text) == seconds * S


@pytest.mark.parametrize(
    ("text", "nanos"),
    [("1500ms", 1_500_000_000), ("2us", 2_000), ("2µs", 2_000), ("2μs", 2_000), ("7ns", 7), ("1.0000000001s", S)],
)
def test_sub_second_units_and_truncation(text: str, nanos: int) -> None:
    assert parse_go_duration(text) == nanos


@pytest.mark.parametrize(
    "text",
    ["", "90", "1d", "1H", "m", ".s", "1 h", " 1h", "1h ", "1h\n", "1h-5m", "--1h", "1e3s", "٣s", "1,5h", "0x10s"],
)
def test_not_go_durations(text: str) -> None:
    with pytest.raises(DurationError, match="is not a Go duration"):
        parse_go_duration(text)


def test_longer_than_an_int64_of_nanoseconds_is_refused() -> None:
    assert parse_go_duration("2562047h47m16.854775807s") == 2**63 - 1
    with pytest.raises(DurationError, match="longer than a Go duration"):
        parse_go_duration("2562047h47m16.854775808s")
    assert parse_go_duration("-2562047h47m16.854775808s") == -(2**63)


@pytest.mark.parametrize(
    ("nanos", "text"), [(1200 * S, "1200s"), (5400 * S, "5400s"), (1_500_000_000, "1.5s"), (1, "0.000000001s")]
)
def test_rendered_in_seconds(nanos: int, text: str) -> None:
    assert format_seconds(nanos) == text
    assert parse_go_duration(text) == nanos


# Go's own output of time.Duration(n).String() for each n (go1.26): the form CAPI's webhooks store.
GO_STRINGS = [
    (0, "0s"), (1, "1ns"), (999, "999ns"), (1_000, "1µs"), (1_500, "1.5µs"), (1_500_000, "1.5ms"),
    (999_999_999, "999.999999ms"), (S, "1s"), (45 * S, "45s"), (90 * S + 500_000_000, "1m30.5s"), (1200 * S, "20m0s"),
    (3600 * S, "1h0m0s"), (5400 * S, "1h30m0s"), (86400 * S, "24h0m0s"), (-300 * S, "-5m0s"),
    (2**63 - 1, "2562047h47m16.854775807s"),
]


@pytest.mark.parametrize(("nanos", "text"), GO_STRINGS)
def test_formatted_as_go_prints_a_duration(nanos: int, text: str) -> None:
    assert format_go_duration(nanos) == text
    assert parse_go_duration(text) == nanos
