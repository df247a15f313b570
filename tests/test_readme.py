"""The README and the reference in docs/ stay true: generated tables are the code's own, the set-up is two commands."""

from __future__ import annotations

import re
from pathlib import Path

from tenantctl.spec.reference import spec_reference

README = Path(__file__).resolve().parents[1] / "README.md"
DOCS = README.parent / "docs"


def _block(text: str, name: str) -> str:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert match, f"README.md has no {name} block"
    return match.group(1)


def test_spec_reference_matches_the_models() -> None:
    assert _block((DOCS / "spec.md").read_text(), "spec-reference") == spec_reference(), (
        "docs/spec.md spec reference is stale: regenerate with `python -m tenantctl.spec.reference`"
    )


def test_setup_is_the_two_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    assert "make test" in (README.parent / ".ci" / "run").read_text()


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


def test_layout_names_every_package_and_no_other() -> None:
    named = set(re.findall(r"^\| `(tenantctl/[\w/]+/)` \|", _block(README.read_text(), "layout"), re.M))
    assert named == _packages(), f"README layout: missing {_packages() - named}, stale {named - _packages()}"


def test_every_package_says_what_lives_there() -> None:
    import ast

    for package in sorted(_packages()):
        doc = ast.get_docstring(ast.parse((SRC / package / "__init__.py").read_text()))
        assert doc and doc.strip(), f"{package}__init__.py has no docstring"
