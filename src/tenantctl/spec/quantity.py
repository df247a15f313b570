"""Kubernetes resource quantities, parsed exactly (Decimal) so rounding is a decision, not an accident."""

from __future__ import annotations

import functools
import math
import re
from decimal import Decimal

from tenantctl.problems import Problems

__all__ = ["QUANTITY", "QuantityError", "parse_quantity", "positive_quantity"]

_SUFFIXES: dict[str, Decimal] = {
    "": Decimal(1),
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "k": Decimal(10) ** 3,
    "M": Decimal(10) ** 6,
    "G": Decimal(10) ** 9,
    "T": Decimal(10) ** 12,
    "P": Decimal(10) ** 15,
    "E": Decimal(10) ** 18,
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}

QUANTITY = r"^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
# Bounds far beyond any resource, well inside what Decimal computes exactly and at once: a quantity of
# `1e1000000` or with a thousand-digit exponent is refused, not evaluated.
_MAX_TEXT = 64
_MAX_EXPONENT = 100


class QuantityError(ValueError):
    """Not a Kubernetes quantity."""


def parse_quantity(value: object) -> Decimal:
    """Parse `1500m`, `8G`, `2Gi`, `1e9`, `2` into an exact Decimal of base units (cores or bytes)."""
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, float) and not math.isfinite(value):
        raise QuantityError(f"{value!r} is not a finite quantity")
    text = str(value)
    _check_length(text)
    return Decimal(text)


def _check_length(text: str) -> None:
    if len(text) > _MAX_TEXT:
        raise QuantityError(f"{text[:_MAX_TEXT]!r}… is not a quantity: longer than {_MAX_TEXT} characters")


@functools.lru_cache(maxsize=1024)
def _parse_text(text: str) -> Decimal:
    """Kept per string: a render reads the same few quantities a dozen times (Decimal is immutable)."""
    _check_length(text)
    match = re.fullmatch(QUANTITY, text)
    if not match:
        raise QuantityError(f"{text!r} is not a Kubernetes quantity (e.g. 1500m, 2, 8G, 8Gi)")
    number, exponent, suffix = match.groups()
    base = Decimal(number)
    if exponent is not None:
        if abs(int(exponent)) > _MAX_EXPONENT:
            raise QuantityError(f"{text!r}: an exponent beyond ±{_MAX_EXPONENT} is no resource quantity")
        return base.scaleb(int(exponent))
    return base * _SUFFIXES[suffix or ""]


def positive_quantity(path: str, raw: object, problems: Problems) -> Decimal | None:
    """The quantity at `path` if it parses and is positive; otherwise the refusal is recorded and None returned."""
    try:
        value = parse_quantity(raw)
    except QuantityError as exc:
        problems.error(path, str(exc))
        return None
    if value <= 0:
        problems.error(path, f"{raw!r} must be positive")
        return None
    return value
