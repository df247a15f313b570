"""The root of the `tenantctl` command line: a typer app whose commands import their heavy modules lazily.

Each module of this package declares one group of commands and imports the library rooms only
inside them. typer inspects the signature of every command it is given (a fifth of a cold start with
all of them), so `main` hands it only the module of the command being run; `--help`, no command or an
unknown one get the whole app, so help and "no such command" list everything.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping, Sequence
from typing import Annotated

import typer

from tenantctl.cli.support import command_group, placeholders
from tenantctl.collector import tune_collector

__all__ = ["COMMAND_MODULES", "MODULES", "build_app", "main"]

MODULES: tuple[str, ...] = ("tenant", "operator", "providers", "secret", "doctor", "e2e", "daytwo")

# The top-level command (or group) names each module registers; a test holds this to what they register.
COMMAND_MODULES: Mapping[str, str] = {
    **dict.fromkeys(("render", "validate", "crds", "audit", "images"), "tenant"),
    **dict.fromkeys(("operator", "install", "kubeconfig"), "operator"),
    **dict.fromkeys(("providers", "vendor"), "providers"),
    "secret": "secret",
    "doctor": "doctor",
    "e2e": "e2e",
    **dict.fromkeys(("get", "plan", "describe"), "daytwo"),
}

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


def build_app(modules: Sequence[str] = MODULES) -> typer.Typer:
    """The root app with the commands of `modules` attached."""
    root = command_group(name="tenantctl", help=HELP, no_args_is_help=True, add_completion=False)
    root.callback()(_root)
    for name in modules:
        importlib.import_module(f"tenantctl.cli.{name}").register(root)
    placeholders(root)
    return root


def _command_of(argv: Sequence[str]) -> str | None:
    """The command named before any option: root options take no value, so the first word is it."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
        if arg in ("--help", "--version"):
            return None
    return None


def main() -> None:
    tune_collector()
    module = COMMAND_MODULES.get(_command_of(sys.argv[1:]) or "")
    build_app((module,) if module else MODULES)()

