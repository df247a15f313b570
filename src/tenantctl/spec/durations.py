"""Go durations (`time.ParseDuration`): the syntax of every timeout Cluster API reads.

Parsed here rather than approximated with a `\\d+[smh]` pattern, so what a user may write is exactly
what the controller accepts: compound (`1h30m`), canonical (`20m0s`) and fractional (`1.5h`) forms.
"""

from __future__ import annotations

import functools
import re
from decimal import Decimal

__all__ = ["DurationError", "format_seconds", "parse_go_duration"]

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
