"""What every tenantctl command shares: refusals become exit code 2 with every problem on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from functools import wraps
from typing import Any, ParamSpec, TypeVar

import typer
from typer.core import TyperGroup

from tenantctl.problems import InvalidInput, Problem, Severity

__all__ = ["EXIT_INVALID", "SHOWN", "command_group", "print_problems", "refusals_exit_2"]

EXIT_INVALID = 2

P = ParamSpec("P")
R = TypeVar("R")


_PYDANTIC_VALUE_ERROR = "Value error, "
"""How pydantic words a ValueError, and so typer's choice check its refusal (`Value error, 'xml' is not
one of 'yaml', 'json'.`): the words are the user's business, the prefix is not."""


class _Group(TyperGroup):
    """A command group whose usage errors are worded for the user, not by the library that found them."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            exc.message = exc.message.removeprefix(_PYDANTIC_VALUE_ERROR)
            raise


def command_group(**settings: Any) -> typer.Typer:
    """A typer app whose help and usage errors click formats plainly: typer's rich formatter imports
    rich's markdown, traceback and syntax modules, half of a cold `--help` (issue 22)."""
    return typer.Typer(cls=_Group, rich_markup_mode=None, pretty_exceptions_enable=False, **settings)


SHOWN = 50
"""Problems printed before the rest is counted: the first ones are what a person reads, a flood hides them."""


def print_problems(problems: Iterable[Problem]) -> None:
    """One problem per line on stderr, errors in red, warnings in yellow (plain when not a terminal);
    past `SHOWN`, how many more there were."""
    from rich.console import Console
    from rich.markup import escape

    listed = list(problems)
    console = Console(stderr=True, highlight=False, soft_wrap=True)
    lines = []
    for p in listed[:SHOWN]:
        style = "red" if p.severity is Severity.ERROR else "yellow"
        lines.append(f"[{style}]{escape(str(p))}[/{style}]")
    if len(listed) > SHOWN:
        errors = sum(p.severity is Severity.ERROR for p in listed[SHOWN:])
        lines.append(f"… and {len(listed) - SHOWN} more ({errors} errors), not shown")
    if lines:
        console.print("\n".join(lines))


def refusals_exit_2(func: Callable[P, R]) -> Callable[P, R]:
    """Wrap a command so `InvalidInput` prints its problems and exits 2, never a traceback."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except InvalidInput as exc:
            sys.stdout.flush()
            print_problems(exc.problems)
            raise typer.Exit(EXIT_INVALID) from None

    return wrapper
