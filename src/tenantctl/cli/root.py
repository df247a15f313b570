"""The root of the `tenantctl` command line: a typer app whose commands import their heavy modules lazily.

Each module of this package declares one group of commands and imports the library rooms only
inside them. typer inspects the signature of every command it is given (a fifth of a cold start with
all of them), so `main`'s root lists the commands from `commands.COMMANDS` and builds only the module
of the command being run; `--help`, no command or an unknown one import none of them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Sequence
from typing import Annotated, Any

import typer

from tenantctl.cli.commands import COMMANDS
from tenantctl.cli.support import Group, command_group, placeholders
from tenantctl.collector import tune_collector

__all__ = ["MODULES", "build_app", "main"]

MODULES: tuple[str, ...] = ("tenant", "operator", "providers", "secret", "doctor", "e2e", "daytwo", "backup")

HELP = "Managed Kubernetes tenant clusters on Proxmox VE or KubeVirt (Cluster API, Kamaji, Talos)."


def _print_version(value: bool) -> None:
    """The installed distribution's version, so a bug report names the build that ran."""
    if value:
        from importlib.metadata import version

        typer.echo(f"tenantctl {version('tenantctl')}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Managed Kubernetes tenant clusters on Proxmox VE or KubeVirt (Cluster API, Kamaji, Talos)."""


class _Root(Group):
    """The root group: its commands listed in the table's order, whichever module registered them first."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [name for name in COMMANDS if name in self.commands]


class _LazyRoot(_Root):
    """The root `main` runs: it lists the commands from the table and imports a command's module only
    when that command runs, so `tenantctl --help` costs typer's import and little else."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in COMMANDS:
            return None
        group = typer.main.get_command(build_app((COMMANDS[cmd_name][0],)))
        return group.get_command(ctx, cmd_name)  # type: ignore[attr-defined]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, text) for name, (_, text) in COMMANDS.items()])


def build_app(modules: Sequence[str] = MODULES, *, lazy: bool = False) -> typer.Typer:
    """The root app with the commands of `modules` attached; `lazy`: with none, each found when run."""
    root = command_group(name="tenantctl", help=HELP, no_args_is_help=True, add_completion=False,
                         cls=_LazyRoot if lazy else _Root)
    root.callback()(_root)
    for name in modules:
        importlib.import_module(f"tenantctl.cli.{name}").register(root)
    placeholders(root)
    return root


def refuse_pydantic_plugins() -> None:
    """pydantic hands every value a model validates to the plugins installed beside it (Proxmox credentials
    and kubeconfigs among them), and finds them by scanning every installed distribution's metadata when the
    first model is built: a tenth of a cold `render`. tenantctl runs none; set before any model exists."""
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"


def main() -> None:
    refuse_pydantic_plugins()
    tune_collector()
    build_app((), lazy=True)()

