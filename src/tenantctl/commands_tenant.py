"""Commands on a tenant's own input: `render`, `validate`, `crds`."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Attach the tenant commands to the root app."""
