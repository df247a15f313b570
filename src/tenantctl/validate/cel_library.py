"""The CEL environment of a Kubernetes apiserver, rebuilt on top of the `cel` package.

`cel` (cel-rust) implements the CEL core; `cel.stdlib` adds cel-go's strings/math/sets/lists/encoders
extensions as Python functions. Kubernetes adds its own libraries on top (lists ``isSorted``/``sum``/
``indexOf``, regex ``find``/``findAll``, ``format.*`` name validators, string ``format``, and the typed
values in `cel_types`). This module assembles all of them into one function table, and says which
names cel-rust already provides, so a rule calling anything else is refused at compile time rather
than failing (or, worse, passing) only when a branch happens to run.
"""

from __future__ import annotations

import math
import uuid
from base64 import b64decode
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from cel import OptionalValue
from cel.stdlib import STDLIB_FUNCTIONS, index_of, last_index_of

from tenantctl.validate import names
from tenantctl.validate.cel_types import TYPE_FUNCTIONS, is_url
from tenantctl.validate.formats import is_date_time
from tenantctl.validate.go_regex import compile_go_regex

__all__ = ["KUBERNETES_FUNCTIONS", "NAMESPACES", "NATIVE_FUNCTIONS", "is_provided"]

NATIVE_FUNCTIONS = frozenset(
    {
        "size", "contains", "startsWith", "endsWith", "matches",
        "string", "bytes", "double", "int", "uint", "timestamp", "duration", "type", "dyn",
        "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek",
        "getHours", "getMinutes", "getSeconds", "getMilliseconds",
        "of", "none", "ofNonZeroValue", "hasValue", "value", "orValue", "or",
    }
)  # fmt: skip
"""Functions cel-rust itself implements (namespaced ones, like ``optional.of``, by their last part)."""

NAMESPACES = frozenset({"optional", "math", "sets", "base64", "strings", "lists", "format", "ip"})
"""Prefixes of namespaced functions; cel-rust reports ``format.dns1123Label()`` as a variable `format`."""


# --- strings and lists --------------------------------------------------------------------------


def _index_of(container: Any, item: Any, offset: int = 0) -> int:
    """``indexOf`` is a string function (cel-go strings) and a list function (Kubernetes lists)."""
    if isinstance(container, str):
        return index_of(container, item, offset)
    return next((i for i, element in enumerate(container) if element == item), -1)


def _last_index_of(container: Any, item: Any, offset: int | None = None) -> int:
    if isinstance(container, str):
        return last_index_of(container, item, offset)
    return next((i for i in range(len(container) - 1, -1, -1) if container[i] == item), -1)


def _is_sorted(items: Sequence[Any]) -> bool:
    return all(items[i] <= items[i + 1] for i in range(len(items) - 1))


def _cel_text(value: Any) -> str:
    """How cel-go's ``%s`` prints a value."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, float):
        return repr(value) if not value.is_integer() or math.isinf(value) else str(int(value))
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_cel_text(k)}: {_cel_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_cel_text(v) for v in value) + "]"
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, timedelta):
        return f"{value.total_seconds():g}s"
    return str(value)


def _string_format(template: str, args: Sequence[Any]) -> str:
    """cel-go's ``"...".format([args])``: verbs %s %d %f %e %b %o %x %X and %% (with ``.N`` precision)."""
    out: list[str] = []
    arg_index = 0
    i = 0
    while i < len(template):
        char = template[i]
        if char != "%":
            out.append(char)
            i += 1
            continue
        j = i + 1
        precision: int | None = None
        if j < len(template) and template[j] == ".":
            k = j + 1
            while k < len(template) and template[k].isdigit():
                k += 1
            precision = int(template[j + 1 : k] or 0)
            j = k
        if j >= len(template):
            raise ValueError("format: unterminated verb at end of string")
        verb = template[j]
        i = j + 1
        if verb == "%":
            out.append("%")
            continue
        if arg_index >= len(args):
            raise ValueError(f"format: index {arg_index} out of range")
        out.append(_format_verb(verb, args[arg_index], precision))
        arg_index += 1
    return "".join(out)


def _format_verb(verb: str, value: Any, precision: int | None) -> str:
    if verb == "s":
        return _cel_text(value)
    if isinstance(value, bool):  # a Python bool is an int; cel-go's %d, %f, %x refuse it
        raise ValueError(f"format: %{verb} does not take a bool")
    if verb == "d" and isinstance(value, int):
        return str(value)
    if verb in "fe" and isinstance(value, int | float):
        return f"{float(value):.{6 if precision is None else precision}{verb}}"
    if verb in "box" and isinstance(value, int):
        return format(value, verb)
    if verb in "xX" and isinstance(value, str | bytes):
        data = value.encode() if isinstance(value, str) else value
        return data.hex() if verb == "x" else data.hex().upper()
    if verb == "X" and isinstance(value, int):
        return format(value, "X")
    raise ValueError(f"format: %{verb} does not take a {type(value).__name__}")


def _find(text: str, pattern: str) -> str:
    match = compile_go_regex(pattern).search(text)
    return match.group(0) if match else ""


def _find_all(text: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in compile_go_regex(pattern).finditer(text)]
    return found if limit < 0 else found[:limit]


# --- the format library (Kubernetes 1.31+): format.dns1123Label().validate(s) -------------------

_FORMAT = "@k8s.format"


def _date_errors(value: str) -> list[str]:
    try:
        date.fromisoformat(value)
    except ValueError:
        return ["an RFC 3339 full-date (YYYY-MM-DD) is required"]
    return [] if len(value) == 10 else ["an RFC 3339 full-date (YYYY-MM-DD) is required"]


def _datetime_errors(value: str) -> list[str]:
    return [] if is_date_time(value) else ["an RFC 3339 date-time is required"]


def _uuid_errors(value: str) -> list[str]:
    try:
        uuid.UUID(value)
    except ValueError:
        return ["invalid UUID"]
    return []


def _byte_errors(value: str) -> list[str]:
    try:
        b64decode(value, validate=True)
    except ValueError:
        return ["invalid base64"]
    return []


def _uri_errors(value: str) -> list[str]:
    return [] if is_url(value) else ["invalid URI"]


def _prefix(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    # The *Prefix variants accept what could still become valid once generateName appends characters.
    return lambda value: check(value + "a") if value.endswith("-") else check(value)


_NAMED_FORMATS: dict[str, Callable[[str], list[str]]] = {
    "dns1123Label": names.dns1123_label_errors,
    "dns1123Subdomain": names.dns1123_subdomain_errors,
    "dns1035Label": names.dns1035_label_errors,
    "qualifiedName": names.qualified_name_errors,
    "dns1123LabelPrefix": _prefix(names.dns1123_label_errors),
    "dns1123SubdomainPrefix": _prefix(names.dns1123_subdomain_errors),
    "dns1035LabelPrefix": _prefix(names.dns1035_label_errors),
    "labelValue": names.label_value_errors,
    "uri": _uri_errors,
    "uuid": _uuid_errors,
    "byte": _byte_errors,
    "date": _date_errors,
    "datetime": _datetime_errors,
}


def _named_format(name: str) -> OptionalValue:
    return OptionalValue.of({_FORMAT: name}) if name in _NAMED_FORMATS else OptionalValue.none()


def _format_validate(fmt: Any, value: str) -> OptionalValue:
    if not (isinstance(fmt, Mapping) and fmt.keys() == {_FORMAT}):
        raise TypeError("validate: no such overload")
    errors = _NAMED_FORMATS[fmt[_FORMAT]](value)
    return OptionalValue.of(errors) if errors else OptionalValue.none()


def _format_constructor(name: str) -> Callable[[], dict[str, str]]:
    return lambda: {_FORMAT: name}


KUBERNETES_FUNCTIONS: dict[str, Callable[..., Any]] = {
    **STDLIB_FUNCTIONS,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "isSorted": _is_sorted,
    "format": _string_format,
    "find": _find,
    "findAll": _find_all,
    "format.named": _named_format,
    "validate": _format_validate,
    **{f"format.{name}": _format_constructor(name) for name in _NAMED_FORMATS},
    **TYPE_FUNCTIONS,
}
"""Every function a Kubernetes CRD rule may call that cel-rust lacks, by CEL name."""

# cel.stdlib's `contains` shim would shadow cel-rust's string `contains`; Kubernetes uses `in` for lists.
KUBERNETES_FUNCTIONS.pop("contains", None)

_PROVIDED = NATIVE_FUNCTIONS | {name.rpartition(".")[2] for name in KUBERNETES_FUNCTIONS}


def is_provided(function: str) -> bool:
    """Whether a function name that `cel.Program.functions()` reports can be called here.

    Operators (``_&&_``, ``!_``, ``@in``, ``_[_]``...) are the interpreter's own.
    """
    return function.startswith(("_", "@", "!", "-")) or function in _PROVIDED
