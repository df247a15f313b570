"""The `tenantctl` command line: a typer app whose commands import their heavy modules lazily.

Each module of this package declares one group of commands and imports the library rooms only
inside them, so `tenantctl --help` loads typer and little else.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tenantctl.cli import daytwo, doctor, e2e, operator, providers, secret, tenant

app = typer.Typer(
    name="tenantctl",
    help="Managed Kubernetes tenant clusters on Proxmox VE or KubeVirt (Cluster API, Kamaji, Talos).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)



def _print_version(value: bool) -> None:
    """The installed distribution's version, so a bug report names the build that ran."""
    if value:
        from importlib.metadata import version

        typer.echo(f"tenantctl {version('tenantctl')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Managed Kubernetes tenant clusters on Proxmox VE or KubeVirt (Cluster API, Kamaji, Talos)."""


for commands in (tenant, operator, providers, secret, doctor, e2e, daytwo):
    commands.register(app)


def main() -> None:
    app()
