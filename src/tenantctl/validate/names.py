"""Kubernetes' name syntaxes (apimachinery ``validation.IsDNS1123Label`` and friends), defined once.

Object names, label keys and values, the ``hostname`` format and CEL's ``format.*`` library all use
these; each function returns the reasons a value is refused (empty when it is fine), in the apiserver's
words, so callers can report or count them.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = [
    "dns1035_label_errors",
    "dns1123_label_errors",
    "dns1123_subdomain_errors",
    "label_value_errors",
    "path_segment_errors",
    "qualified_name_errors",
]

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_QUALIFIED_NAME_PART = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


def _too_long(value: str, limit: int) -> list[str]:
    return [f"must be no more than {limit} characters"] if len(value) > limit else []


def _syntax(pattern: re.Pattern[str], limit: int, rule: str) -> Callable[[str], list[str]]:
    """A checker for one name syntax: too long and/or not matching, in the apiserver's words."""

    def errors(value: str) -> list[str]:
        found = _too_long(value, limit)
        if not pattern.match(value):
            found.append(rule)
        return found

    return errors


dns1123_label_errors = _syntax(
    _DNS1123_LABEL,
    63,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character",
)
dns1123_subdomain_errors = _syntax(
    _DNS1123_SUBDOMAIN,
    253,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character",
)
dns1035_label_errors = _syntax(
    _DNS1035_LABEL,
    63,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
    "start with an alphabetic character, and end with an alphanumeric character",
)


def path_segment_errors(value: str) -> list[str]:
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


# apimachinery's qualifiedNameErrMsg, said of the name part or, for a key it cannot split, of the whole key.
_QUALIFIED_NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)


def qualified_name_errors(value: str) -> list[str]:
    if value.count("/") > 1:  # apimachinery's IsQualifiedName judges no part of such a key
        return [f"a qualified name {_QUALIFIED_NAME_RULE}, with an optional DNS subdomain prefix and '/' "
                "(e.g. 'example.com/MyName')"]
    prefix, slash, name = value.rpartition("/")
    errors: list[str] = []
    if slash:
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend(f"prefix part {e}" for e in dns1123_subdomain_errors(prefix))
    if not name:
        errors.append("name part must be non-empty")
    else:
        errors.extend(f"name part {e}" for e in _too_long(name, 63))
        if not _QUALIFIED_NAME_PART.match(name):
            errors.append(f"name part {_QUALIFIED_NAME_RULE}")
    return errors


def label_value_errors(value: str) -> list[str]:
    errors = _too_long(value, 63)
    if not _LABEL_VALUE.match(value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )
    return errors
