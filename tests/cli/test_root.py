"""`main` assembles only the module of the command it runs: the table it dispatches on must be true."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.cli.commands import COMMANDS
from tenantctl.cli.root import MODULES, build_app


def top_level(root: typer.Typer) -> set[str]:
    group = typer.main.get_group(root)
    return set(group.commands)


@pytest.mark.parametrize("module", MODULES)
def test_each_module_registers_exactly_the_commands_the_table_gives_it(module: str) -> None:
    assert top_level(build_app((module,))) == {c for c, (m, _) in COMMANDS.items() if m == module}


def test_the_table_covers_the_whole_app() -> None:
    assert top_level(app) == set(COMMANDS)


def test_an_unknown_command_is_refused_by_the_whole_app() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from tenantctl.cli import main; sys.argv = ['tenantctl', 'rendr']; main()"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.returncode == 2
    assert "No such command 'rendr'" in done.stderr


def test_the_lazy_root_says_what_the_whole_app_says() -> None:
    """`main`'s root lists the commands from the table without importing them: its help is the whole app's,
    word for word, so the table's summaries are the ones each module registers."""
    lazy = CliRunner().invoke(build_app((), lazy=True), ["--help"])
    whole = CliRunner().invoke(app, ["--help"])
    assert lazy.exit_code == whole.exit_code == 0
    assert lazy.output == whole.output


@pytest.mark.parametrize("argv", [["render", "--help"], ["crds", "pull", "--help"], ["doctor", "--help"],
                                  ["nosuch"]])
def test_the_lazy_root_runs_a_command_as_the_whole_app_does(argv: list[str]) -> None:
    lazy = CliRunner().invoke(build_app((), lazy=True), argv)
    whole = CliRunner().invoke(app, argv)
    assert (lazy.exit_code, lazy.output) == (whole.exit_code, whole.output)


def test_help_imports_no_command_module() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys; from tenantctl.cli import main; sys.argv = ['tenantctl', '--help']\n"
         "try:\n    main()\nexcept SystemExit:\n    pass\n"
         "print(sorted(m for m in sys.modules if m.startswith('tenantctl.cli.') and m.rsplit('.', 1)[1] in "
         f"{list(MODULES)!r}))"],
        capture_output=True, text=True, timeout=60,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]", done.stdout + done.stderr
