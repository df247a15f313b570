"""`tenantctl e2e`: render a stand fixture and run the live-stand sequence."""

from __future__ import annotations

import typer

__all__ = ["register"]

e2e_app = typer.Typer(help="End-to-end harness for a live management cluster + Proxmox stand.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Attach `e2e` to the root app."""
    app.add_typer(e2e_app, name="e2e")
