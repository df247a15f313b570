"""The command line: every typer command, thin — parse flags, call a library function, print.

The only room that imports typer or rich; it may import every other room, and none imports it.
"""

from typing import Any

from tenantctl.cli.root import main

__all__ = ["app", "main"]


def __getattr__(name: str) -> Any:
    """`app`, the whole command line, is assembled on first use; `main` assembles only the command it runs."""
    if name == "app":
        from tenantctl.cli.root import build_app

        built = build_app()
        globals()["app"] = built
        return built
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
