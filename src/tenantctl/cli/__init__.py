"""The command line: every typer command, thin — parse flags, call a library function, print.

The only room that imports typer or rich; it may import every other room, and none imports it.
"""

from tenantctl.cli.app import app, main

__all__ = ["app", "main"]
