"""What every tenantctl command shares: refusals become exit code 2 with every problem on stderr."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from functools import wraps
from typing import ParamSpec, TypeVar

import typer

from tenantctl.problems import InvalidInput, Problem, Severity

__all__ = ["EXIT_INVALID", "print_problems", "refusals_exit_2"]

EXIT_INVALID = 2

P = ParamSpec("P")
R = TypeVar("R")


def print_problems(problems: Iterable[Problem]) -> None:
    """One problem per line on stderr, errors in red, warnings in yellow (plain when not a terminal)."""
    from rich.console import Console
    from rich.markup import escape

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    for p in problems:
        style = "red" if p.severity is Severity.ERROR else "yellow"
        console.print(f"[{style}]{escape(str(p))}[/{style}]")


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
