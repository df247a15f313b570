"""Go (RE2) regular expressions, as CRD ``pattern`` fields and CEL ``find`` use them, for Python's `re`.

The apiserver matches with RE2; Python's `re` reads almost every RE2 pattern the same way, but refuses a
few spellings that upstream CRDs do use: inline flags after the start (cert-manager writes
``^(?i)[a-z0-9_]...``), ``\\z`` for end of text, and POSIX classes such as ``[[:alpha:]]``. This module
rewrites exactly those and lets `re` reject anything else, so an untranslatable pattern fails loudly
instead of being matched with different semantics.
"""

from __future__ import annotations

import functools
import re

__all__ = ["GoRegexError", "compile_go_regex", "translate_go_regex"]

_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7F",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1F\\x7F",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
_INLINE_FLAGS = re.compile(r"\(\?([imsU]+)\)")
_POSIX_CLASS = re.compile(r"\[:(\^?)([a-z]+):\]")


class GoRegexError(ValueError):
    """A Go regular expression that Python cannot match with the same meaning."""


def translate_go_regex(pattern: str) -> str:
    """The Python spelling of an RE2 pattern (raises `GoRegexError` when there is none)."""
    out: list[str] = []
    # Scoped-flag groups opened at each nesting level (index 0 is the top level): a mid-pattern
    # ``(?i)`` becomes ``(?i:`` closed at the end of its group and reopened after each ``|``.
    scoped: list[list[str]] = [[]]
    multiline = any("m" in flags for flags in _INLINE_FLAGS.findall(pattern))
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            escape = pattern[i : i + 2]
            if escape == "\\z":
                out.append("\\Z")
            elif escape in ("\\Q", "\\C") or escape.startswith(("\\p", "\\P")):
                raise GoRegexError(f"RE2 escape {escape!r} has no Python equivalent")
            else:
                out.append(escape)
            i += 2
            continue
        if char == "[":
            end = _class_end(pattern, i)
            out.append(_translate_class(pattern[i:end]))
            i = end
            continue
        flags = _INLINE_FLAGS.match(pattern, i)
        if flags is not None:
            letters = flags.group(1)
            if "U" in letters:
                raise GoRegexError("RE2 flag U (ungreedy) has no Python equivalent")
            if len(scoped) == 1 and out in ([], ["^"]) and "|" not in pattern:
                out.insert(0, f"(?{letters})")
            else:
                out.append(f"(?{letters}:")
                scoped[-1].append(letters)
            i = flags.end()
            continue
        if char == "$" and not multiline:
            out.append("\\Z")  # RE2's `$` is the end of text; Python's also matches before a final newline
            i += 1
            continue
        if char == "(":
            scoped.append([])
        elif char == ")" and len(scoped) > 1:
            out.append(")" * len(scoped.pop()))
        elif char == "|" and scoped[-1]:
            out.append(")" * len(scoped[-1]) + "|" + "".join(f"(?{f}:" for f in scoped[-1]))
            i += 1
            continue
        out.append(char)
        i += 1
    out.append(")" * len(scoped[0]))
    return "".join(out)


def _class_end(pattern: str, start: int) -> int:
    """Index just past the character class opening at `start` (RE2 rules: a leading ``]`` is literal)."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close != -1:
                i = close + 2
                continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    raise GoRegexError(f"unterminated character class in {pattern!r}")


def _translate_class(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        negated, name = match.groups()
        if name not in _POSIX_CLASSES:
            raise GoRegexError(f"unknown POSIX class [:{name}:]")
        if negated:
            raise GoRegexError(f"negated POSIX class [:^{name}:] has no Python equivalent")
        return _POSIX_CLASSES[name]

    return _POSIX_CLASS.sub(replace, text)


@functools.lru_cache(maxsize=1024)
def compile_go_regex(pattern: str) -> re.Pattern[str]:
    """Compile an RE2 pattern for Python; `GoRegexError` says why when it cannot mean the same."""
    try:
        return re.compile(translate_go_regex(pattern))
    except re.error as exc:
        raise GoRegexError(f"{pattern!r} is not a regular expression Python can match: {exc}") from None
