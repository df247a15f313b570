"""Running the CLI in-process on hostile text: the outcome a user sees, without a subprocess."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from tenantctl.cli import app

# `path: message`, where a path is a field path or `file:line:col` (a refusal names where).
PROBLEM_LINE = re.compile(r"^(warning: )?\S[^\n]*?: \S.*$")


@dataclass(frozen=True)
class Outcome:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None

    def refusal_at(self, fragment: str) -> str:
        """The stderr line naming `fragment`; fails with the whole stderr when none does."""
        assert self.exit_code == 2, f"exit {self.exit_code}\n{self.stderr}\n{self.exception!r}"
        line = next((ln for ln in self.stderr.splitlines() if fragment in ln.split(": ", 1)[0]), None)
        assert line is not None, f"no problem at {fragment!r}:\n{self.stderr}"
        return line


def invoke(args: list[str], files: dict[str, str | bytes], tmp_path: Path) -> Outcome:
    """Write `files` into tmp_path, substitute their names in `args`, run `tenantctl args`."""
    paths = {}
    for name, content in files.items():
        path = tmp_path / name
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8", "surrogatepass"))
        paths[name] = str(path)
    result = CliRunner().invoke(app, [paths.get(a, a) for a in args])
    crashed = result.exception if not isinstance(result.exception, SystemExit) else None
    assert crashed is None, f"traceback: {crashed!r}"
    return Outcome(result.exit_code, result.stdout, result.stderr, crashed)


def dump(docs: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(docs, sort_keys=False)
