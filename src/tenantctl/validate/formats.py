"""The `format` values that are cheap to check and that a Kubernetes cluster really enforces.

The apiserver checks string formats such as ``date-time`` and ``byte`` (Secret ``data`` must be base64);
``int32``/``int64`` are not checked by the apiserver, but a Go controller fails to decode a number out of
range, so a render that overflows them is refused here rather than by a crash-looping controller.
Formats not listed pass, as they do in the apiserver.
"""

from __future__ import annotations

import binascii
import ipaddress
import re
import uuid
from base64 import b64decode
from collections.abc import Callable
from datetime import datetime
from typing import Any

from jsonschema import FormatChecker  # type: ignore[import-untyped]

from tenantctl.validate.names import dns1123_subdomain_errors

__all__ = ["GO_PATTERN_KEYWORD", "KUBERNETES_FORMATS", "is_date_time"]

GO_PATTERN_KEYWORD = "x-tenantctl-go-pattern"
"""Beside a translated `pattern`: the RE2 pattern as the CRD spells it, for messages."""

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_RFC3339 = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _integer_in(value: Any, bounds: tuple[int, int]) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return True  # the `type` keyword reports non-numbers
    return bounds[0] <= value <= bounds[1]


def _int32(value: Any) -> bool:
    return _integer_in(value, _INT32)


def _int64(value: Any) -> bool:
    return _integer_in(value, _INT64)


def is_date_time(value: str) -> bool:
    """An RFC 3339 date-time, as Kubernetes' ``date-time`` format and CEL ``format.datetime()`` accept."""
    if not _RFC3339.match(value):
        return False
    try:
        datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    return True


def _date_time(value: Any) -> bool:
    return not isinstance(value, str) or is_date_time(value)


def _byte(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    b64decode(value, validate=True)
    return True


def _uuid(value: Any) -> bool:
    if not isinstance(value, str):
        return True
    uuid.UUID(value)
    return True


def _ipv4(value: Any) -> bool:
    return not isinstance(value, str) or isinstance(ipaddress.ip_address(value), ipaddress.IPv4Address)


def _ipv6(value: Any) -> bool:
    return not isinstance(value, str) or isinstance(ipaddress.ip_address(value), ipaddress.IPv6Address)


def _cidr(value: Any) -> bool:
    if isinstance(value, str):
        ipaddress.ip_network(value, strict=False)
    return True


def _hostname(value: Any) -> bool:
    return not isinstance(value, str) or not dns1123_subdomain_errors(value)


_CHECKS: dict[str, tuple[Callable[[Any], bool], type[Exception] | tuple[type[Exception], ...]]] = {
    "int32": (_int32, ()),
    "int64": (_int64, ()),
    "date-time": (_date_time, ()),
    "byte": (_byte, binascii.Error),
    "uuid": (_uuid, ValueError),
    "ipv4": (_ipv4, ValueError),
    "ipv6": (_ipv6, ValueError),
    "cidr": (_cidr, ValueError),
    "hostname": (_hostname, ()),
}


def _format_checker() -> Any:
    checker = FormatChecker(formats=())
    for name, (check, raises) in _CHECKS.items():
        checker.checks(name, raises=raises)(check)
    return checker


KUBERNETES_FORMATS: Any = _format_checker()
"""A `jsonschema.FormatChecker` for the formats above (and only those)."""
