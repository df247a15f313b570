"""Kubernetes resource quantities, parsed exactly (Decimal) so rounding is a decision, not an accident."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

__all__ = ["QuantityError", "parse_quantity"]

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

_QUANTITY = re.compile(
    r"^([+-]?[0-9]+(?:\.[0-9]*)?|[+-]?\.[0-9]+)"
    r"(?:[eE]([+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


class QuantityError(ValueError):
    """Not a Kubernetes quantity."""


def parse_quantity(value: str | int | float) -> Decimal:
    """Parse `1500m`, `8G`, `2Gi`, `1e9`, `2` into an exact Decimal of base units (cores or bytes)."""
    if isinstance(value, bool):
        raise QuantityError(f"{value!r} is not a quantity")
    if isinstance(value, int | float):
        return Decimal(str(value))
    match = _QUANTITY.match(value.strip())
    if not match:
        raise QuantityError(f"{value!r} is not a Kubernetes quantity (e.g. 1500m, 2, 8G, 8Gi)")
    number, exponent, suffix = match.groups()
    try:
        base = Decimal(number)
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise QuantityError(f"{value!r} is not a quantity") from exc
    if exponent is not None:
        return base * (Decimal(10) ** int(exponent))
    return base * _SUFFIXES[suffix or ""]
