"""The README and the reference in docs/ stay true: generated tables are the code's own, the set-up is two commands."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tenantctl.spec.reference import spec_reference

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = README.parent / "docs"


def _block(text: str, name: str) -> str:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert match, f"no {name} block"
    return match.group(1)


def test_spec_reference_matches_the_models() -> None:
    assert _block((DOCS / "spec.md").read_text(), "spec-reference") == spec_reference(), (
        "docs/spec.md spec reference is stale: regenerate with `python -m tenantctl.spec.reference`"
    )


def _make_plan(target: str) -> list[str]:
    """What `make TARGET` would run on a fresh machine (every target treated as out of date)."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}  # under make test
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "-B", target],
        cwd=README.parent, capture_output=True, text=True, check=True, timeout=60, env=env,
    )
    return done.stdout.splitlines()


def test_setup_is_the_two_commands() -> None:
    """The set-up block is exactly `make demo` and `make test`; each creates the venv and installs what it
    needs; `make test` runs the suite and CI runs exactly `make test`."""
    text = README.read_text()
    block = re.search(r"Two commands on a fresh machine[^\n]*:\n\n((?:    .*\n)+)", text)
    assert block, "README has no set-up block"
    commands = [line.split("#")[0].strip() for line in block[1].splitlines()]
    assert commands == ["make demo", "make test"]
    ci = [line for line in (README.parent / ".ci" / "run").read_text().splitlines() if line and line[0] != "#"]
    assert ci[-1] == "make test"
    for target, install in (("demo", "pip install -q -e ."), ("test", "pip install -q -e '.[dev]'")):
        plan = _make_plan(target)
        assert plan[0] == "python3 -m venv .venv", target
        assert any(install in line for line in plan), (target, plan)
    assert any(line.startswith(".venv/bin/tenantctl render") for line in _make_plan("demo"))
    assert _make_plan("test")[-1] == 'PYTHONDONTWRITEBYTECODE= .venv/bin/pytest -q -m "not slow" -n 3 --dist worksteal'
    assert "bash hack/envtest/build.sh" in _make_plan("test"), "the real-API tier's binaries, built or reused first"


def test_the_privileges_reference_is_linked_and_generated_from_the_tables() -> None:
    """The README points at docs/proxmox-privileges.md, which tests/proxmox holds to the generated text."""
    assert "](docs/proxmox-privileges.md)" in README.read_text()


def test_credentials_key_tables_are_generated_from_the_key_constants() -> None:
    from tenantctl.credentials.keys import key_table

    storage_chain = README.parent / "docs" / "storage-chain.md"
    stale = "stale: regenerate with `python -m tenantctl.credentials.keys`"
    assert _block((DOCS / "rendering.md").read_text(), "credentials-keys") == key_table(), stale
    assert _block(storage_chain.read_text(), "credentials-keys") == key_table(), stale


SRC = README.parent / "src"


def _packages() -> set[str]:
    found = {f"{p.parent.relative_to(SRC).as_posix()}/" for p in (SRC / "tenantctl").rglob("__init__.py")}
    return found - {"tenantctl/"}


def test_every_relative_link_of_the_readme_and_docs_resolves() -> None:
    """The reference moved from the README into docs/: no link may point where nothing is."""
    broken = []
    for page in [README, *sorted(DOCS.glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            path = target.split("#", 1)[0]
            if path and not target.startswith(("http://", "https://")) and not (page.parent / path).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_the_readme_is_short_and_links_getting_started_first() -> None:
    text = README.read_text()
    assert len(text.splitlines()) <= 120
    first_screen = "\n".join(text.splitlines()[:25])
    assert "](docs/getting-started.md)" in first_screen


def test_layout_names_every_package_and_no_other() -> None:
    layout = _block((DOCS / "architecture.md").read_text(), "layout")
    named = set(re.findall(r"^\| `(tenantctl/[\w/]+/)` \|", layout, re.M))
    assert named == _packages(), f"architecture.md layout: missing {_packages() - named}, stale {named - _packages()}"


def test_every_package_says_what_lives_there() -> None:
    import ast

    for package in sorted(_packages()):
        doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text()))
        assert doc and doc.strip(), f"{package}__init__.py has no docstring"
