"""The `tenantctl` command line: a typer app whose commands import their heavy modules lazily."""

from __future__ import annotations

import typer

app = typer.Typer(
    name="tenantctl",
    help="Managed Kubernetes tenant clusters on Proxmox VE or KubeVirt (Cluster API, Kamaji, Talos).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Sub-apps and commands of each room register here, one line each.
from tenantctl import commands_tenant as _commands_tenant  # noqa: E402

_commands_tenant.register(app)


def main() -> None:
    app()
