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
from tenantctl.providers import commands as _providers_commands  # noqa: E402

_commands_tenant.register(app)
_providers_commands.register(app)
from tenantctl.proxmox import commands as _commands_doctor  # noqa: E402

_commands_doctor.register(app)
from tenantctl.e2e import commands as _commands_e2e  # noqa: E402

_commands_e2e.register(app)
from tenantctl.operator import commands as _commands_operator  # noqa: E402

_commands_operator.register(app)


def main() -> None:
    app()
