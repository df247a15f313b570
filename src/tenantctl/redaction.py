"""What is never echoed: a credential a user put where a URL or a value was expected.

A refusal names the value it refuses, and a URL with `user:password@` or a `?token=` in it would carry
the credential into an error, a Warning Event, a condition message and the operator's log (issue 61:
an S3 endpoint with userinfo reached all four). Every Problem, condition and Event passes through
`redact`, so no caller has to remember to.
"""

from __future__ import annotations

import re

__all__ = ["MASK", "has_userinfo", "redact", "redact_diff_line"]

MASK = "***"
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@?#'\"]+@")
_PARAMETER = re.compile(
    r"(?P<name>\b(?:token|secret|password|passwd|pwd|key|api[_-]?key|access[_-]?key|secret[_-]?key"
    r"|x-amz-signature|x-amz-credential|x-amz-security-token|sig|signature)=)[^&\s'\"#]+",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """`text` with URL userinfo and credential-named query parameters masked."""
    if "@" not in text and "=" not in text:
        return text
    return _PARAMETER.sub(rf"\g<name>{MASK}", _USERINFO.sub(rf"\g<scheme>{MASK}@", text))


def has_userinfo(url: str) -> bool:
    """Whether `url` carries `user[:password]@` before its host."""
    return _USERINFO.search(url) is not None


_CREDENTIAL_NAME = r"[\w.-]*(?:token|key|secret|password)"
_FIELD_CHANGE = re.compile(rf"^(?P<head>[~+-] (?:[^:\s]*\.)?{_CREDENTIAL_NAME}): .*$", re.IGNORECASE)
_INLINE = re.compile(rf"(?P<head>(?<![\w.-]){_CREDENTIAL_NAME}\s*:\s*)[^\s\\'\",}}\]]+", re.IGNORECASE)
"""`token: value` wherever it stands: a changed YAML line, or inside a quoted list of patches."""


def redact_diff_line(line: str) -> str:
    """One line of `plan`'s field diff with a credential's value hidden: a field named like one
    (`machine.token`, `cluster.ca.key`, `aescbcEncryptionSecret`), or such a key written inside a value (a
    machine configuration's YAML); and `redact`'s masks."""
    if match := _FIELD_CHANGE.match(line):
        return f"{match['head']}: (value not shown)"
    return redact(_INLINE.sub(rf"\g<head>{MASK}", line))
