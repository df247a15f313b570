"""Problems found in user input, collected in one pass and reported together.

Every refusal in tenantctl is a `Problem` naming the field path(s) and value(s) involved; a command
that meets them raises `InvalidInput` once with all of them, and the CLI turns that into exit code 2.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from enum import StrEnum

from tenantctl.redaction import redact

__all__ = ["InvalidInput", "Problem", "Problems", "Severity"]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Problem:
    """One finding: `path` is where (``NodePool/md0.spec.proxmox.storage``), `message` says what and why."""

    path: str
    message: str
    severity: Severity = Severity.ERROR

    def __post_init__(self) -> None:
        # A refusal quotes the value it refuses: never a credential in it (redaction.py).
        object.__setattr__(self, "path", redact(self.path))
        object.__setattr__(self, "message", redact(self.message))

    def __str__(self) -> str:
        prefix = "warning: " if self.severity is Severity.WARNING else ""
        return f"{prefix}{_one_line(self.path)}: {_one_line(self.message)}"


def _one_line(text: str) -> str:
    """A user's value may hold a newline or a control character; a problem is one `path: message` line."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class Problems:
    """An ordered collector of problems; `raise_if_errors` turns errors into one `InvalidInput`."""

    def __init__(self, items: Iterable[Problem] = ()) -> None:
        self._items: list[Problem] = list(items)

    def error(self, path: str, message: str) -> None:
        self._items.append(Problem(path, message))

    def warn(self, path: str, message: str) -> None:
        self._items.append(Problem(path, message, Severity.WARNING))

    def extend(self, other: Iterable[Problem]) -> None:
        self._items.extend(other)

    def __iter__(self) -> Iterator[Problem]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self._items if p.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self._items if p.severity is Severity.WARNING]

    def raise_if_errors(self) -> None:
        if self.errors:
            raise InvalidInput(self._items)


class InvalidInput(Exception):
    """Input that tenantctl refuses; carries every problem found (warnings included, for context)."""

    def __init__(self, problems: Iterable[Problem]) -> None:
        self.problems: list[Problem] = list(problems)
        if not self.errors:
            # A refusal with nothing refused would reach the user (and the operator's status) as an empty reason.
            raise ValueError(f"InvalidInput needs at least one error, got {self.problems!r}")
        super().__init__("\n".join(str(p) for p in self.problems))

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity is Severity.ERROR]
