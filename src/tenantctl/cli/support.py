"""What every tenantctl command shares: refusals become exit code 2 with every problem on stderr."""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from functools import wraps
from types import UnionType
from typing import Annotated, Any, Literal, ParamSpec, TypeVar, Union, get_args, get_origin, get_type_hints

import typer
from typer.core import TyperGroup
from typer.models import OptionInfo

from tenantctl.problems import InvalidInput, Problem, Severity

__all__ = [
    "EXIT_INVALID", "PLACEHOLDERS", "SHOWN", "Group", "command_group", "placeholders", "print_problems",
    "refusals_exit_2",
]

EXIT_INVALID = 2

P = ParamSpec("P")
R = TypeVar("R")


_PYDANTIC_VALUE_ERROR = "Value error, "
"""How pydantic words a ValueError, and so typer's choice check its refusal (`Value error, 'xml' is not
one of 'yaml', 'json'.`): the words are the user's business, the prefix is not."""


class Group(TyperGroup):
    """A command group whose usage errors are worded for the user, not by the library that found them."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except typer.BadParameter as exc:
            exc.message = exc.message.removeprefix(_PYDANTIC_VALUE_ERROR)
            raise


PLACEHOLDERS: Mapping[str, str] = {
    **dict.fromkeys(("--filename", "--observed", "--platform", "--live", "--previous", "--rendered", "--credentials",
                     "--credentials-secret", "--ca-file", "--root-ca", "--management", "--kubeconfig"), "FILE"),
    **dict.fromkeys(("--crds", "--components", "--pg-bin", "--workdir", "--dir"), "DIR"),
    **dict.fromkeys(("--context", "--cluster", "--name"), "NAME"),
    **dict.fromkeys(("--mirror", "--pve-url", "--url"), "URL"),
    **dict.fromkeys(("--poll", "--tenant-timeout", "--timeout-nodes", "--timeout-teardown", "--timeout-volume",
                     "--datastore-timeout"), "SECONDS"),
    "--out": "PATH", "--etcdctl": "PATH", "--backup": "OBJECT",
    "--namespace": "NAMESPACE", "--management-cluster-domain": "DOMAIN", "--token-id": "ID",
    "--token-secret-env": "VARIABLE",
}
"""One placeholder style in every help: an upper-case word for what the value is (a list option repeats it),
choices as `a|b`; typer's own (`<path>`, `<list[Path]>`, `<str>`) says only the Python type."""


def _choices(annotation: Any) -> str | None:
    while get_origin(annotation) in (list, Union, UnionType):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    if get_origin(annotation) is Literal:
        return "|".join(map(str, get_args(annotation)))
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return "|".join(str(m.value) for m in annotation)
    return None


def placeholders(app: typer.Typer) -> None:
    """Give every value-taking option of `app` (and its groups) a placeholder in the one style, where its
    declaration names none. The annotations are strings (`from __future__ import annotations`), each
    evaluation a new `typer.Option`: the evaluated ones replace them, so typer reads the placeholders."""
    for command in app.registered_commands:
        if command.callback is None:
            continue
        hints = get_type_hints(command.callback, include_extras=True)
        for name, hint in hints.items():
            if get_origin(hint) is not Annotated:
                continue
            base, *meta = get_args(hint)
            for info in meta:
                if not isinstance(info, OptionInfo) or info.metavar is not None or base is bool:
                    continue
                long = next((d for d in info.param_decls or () if d.startswith("--")), f"--{name.replace('_', '-')}")
                info.metavar = _choices(base) or PLACEHOLDERS.get(long) or long.removeprefix("--").upper()
        for function in {command.callback, inspect.unwrap(command.callback)}:
            function.__annotations__.update(hints)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            placeholders(group.typer_instance)


def command_group(**settings: Any) -> typer.Typer:
    """A typer app whose help and usage errors click formats plainly: typer's rich formatter imports
    rich's markdown, traceback and syntax modules, half of a cold `--help` (issue 22)."""
    settings.setdefault("cls", Group)
    return typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, **settings)


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
