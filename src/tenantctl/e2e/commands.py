"""`tenantctl e2e`: render a stand fixture and run the live-stand sequence."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from tenantctl.cli_support import refusals_exit_2

__all__ = ["register"]

e2e_app = typer.Typer(help="End-to-end harness for a live management cluster + Proxmox stand.", no_args_is_help=True)


@e2e_app.command("render-fixture")
@refusals_exit_2
def render_fixture_command(
    template: Annotated[Path, typer.Argument(help="Fixture with ${TENANTCTL_*} placeholders.")],
    out: Annotated[Path | None, typer.Option("-o", "--out", help="Write here instead of stdout.")] = None,
) -> None:
    """Fill the stand variables from the environment (defaults in code); exit 2 naming every gap."""
    from tenantctl.e2e.fixture import render_fixture
    from tenantctl.problems import InvalidInput, Problem

    try:
        text = template.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput([Problem(str(template), f"cannot read file: {exc.strerror or exc}")]) from None
    rendered = render_fixture(text, os.environ, str(template))
    if out is None:
        typer.echo(rendered, nl=False)
    else:
        out.write_text(rendered, encoding="utf-8")


def register(app: typer.Typer) -> None:
    """Attach `e2e` to the root app."""
    app.add_typer(e2e_app, name="e2e")
