"""Go durations (`time.ParseDuration`): the syntax of every timeout Cluster API reads.

Parsed here rather than approximated with a `\\d+[smh]` pattern, so what a user may write is exactly
what the controller accepts: compound (`1h30m`), canonical (`20m0s`) and fractional (`1.5h`) forms.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

__all__ = ["DurationError", "format_go_duration", "format_seconds", "parse_go_duration"]

_NANOS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # U+00B5 micro sign
    "μs": 1_000,  # U+03BC Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_UNITS = "|".join(sorted(map(re.escape, _NANOS_PER_UNIT), key=len, reverse=True))
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
_DURATION = re.compile(rf"([-+]?)((?:{_NUMBER}(?:{_UNITS}))+)")
_ELEMENT = re.compile(rf"({_NUMBER})({_UNITS})")
# Go's time.Duration is an int64 of nanoseconds; a longer duration is a parse error there.
_MAX_NANOS = 2**63 - 1


class DurationError(ValueError):
    pass


@functools.lru_cache(maxsize=1024)
def parse_go_duration(text: str) -> int:
    """Nanoseconds of a Go duration; the whole string must match, as Go requires (kept per string)."""
    if text in ("0", "+0", "-0"):
        return 0
    match = _DURATION.fullmatch(text)
    if match is None:
        raise DurationError(f"{text!r} is not a Go duration (e.g. 90s, 20m, 1h30m, 1.5h)")
    sign, body = match.groups()
    total = sum((Decimal(number) * _NANOS_PER_UNIT[unit] for number, unit in _ELEMENT.findall(body)), Decimal(0))
    nanos = int(total)
    if nanos > _MAX_NANOS + (sign == "-"):
        raise DurationError(f"{text!r} is longer than a Go duration can be (about 292 years)")
    return -nanos if sign == "-" else nanos


def format_seconds(nanos: int) -> str:
    """A duration in seconds, the one unit every Go duration reader accepts: 5400000000000 -> `5400s`."""
    seconds = Decimal(nanos) / 1_000_000_000
    return f"{format(seconds.normalize(), 'f')}s"


_SMALL_UNITS = (("ns", 1), ("µs", 1_000), ("ms", 1_000_000))


def format_go_duration(nanos: int) -> str:
    """A duration as Go's `time.Duration.String()` prints it (`20m0s`, `1h0m0s`, `1.5s`, `300ms`): the form a
    Go webhook that decodes and encodes a `metav1.Duration` stores, so an object holds what was applied."""
    if nanos == 0:
        return "0s"
    sign, u = ("-" if nanos < 0 else ""), abs(nanos)
    if u < 1_000_000_000:
        unit, size = next((n, s) for n, s in reversed(_SMALL_UNITS) if u >= s)
        return f"{sign}{format((Decimal(u) / size).normalize(), 'f')}{unit}"
    seconds, fraction = divmod(u, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    text = f"{hours}h" if hours else ""
    text += f"{minutes}m" if hours or minutes else ""
    text += str(secs) + (("." + f"{fraction:09d}".rstrip("0")) if fraction else "")
    return f"{sign}{text}s"
