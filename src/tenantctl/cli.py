"""The `tenantctl` command line: a typer app whose commands import their heavy modules lazily.

Each room registers its own commands; the modules imported here only declare commands, so
`tenantctl --help` loads typer and little else.
"""

from __future__ import annotations

from typing import Annotated

import typer

from tenantctl import commands_tenant
from tenantctl.credentials import commands as credentials_commands
from tenantctl.e2e import commands as e2e_commands
from tenantctl.operator import commands as operator_commands
from tenantctl.operator import daytwo_commands
from tenantctl.providers import commands as providers_commands
from tenantctl.proxmox import commands as doctor_commands

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


for room in (
    commands_tenant, operator_commands, providers_commands, credentials_commands, doctor_commands, e2e_commands
):
    room.register(app)
daytwo_commands.register(app)


def main() -> None:
    app()
