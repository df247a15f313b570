"""The README stays true: its spec reference is the models' own, and its set-up is the two commands."""

from __future__ import annotations

import re
from pathlib import Path

from tenantctl.spec.reference import spec_reference

README = Path(__file__).resolve().parents[1] / "README.md"


def _block(text: str, name: str) -> str:
    match = re.search(rf"<!-- {name}:start -->\n(.*?)<!-- {name}:end -->", text, re.S)
    assert match, f"README.md has no {name} block"
    return match.group(1)


def test_spec_reference_matches_the_models() -> None:
    assert _block(README.read_text(), "spec-reference") == spec_reference(), (
        "README spec reference is stale: regenerate with `python -m tenantctl.spec.reference`"
    )


def test_setup_is_the_two_commands() -> None:
    text = README.read_text()
    assert "make demo" in text and "make test" in text
    assert "make test" in (README.parent / ".ci" / "run").read_text()


def test_privilege_section_is_generated_from_the_tables() -> None:
    from tenantctl.proxmox.privileges import render_privileges_markdown

    assert _block(README.read_text(), "privileges") == render_privileges_markdown()


def test_credentials_key_tables_are_generated_from_the_key_constants() -> None:
    from tenantctl.credentials.keys import key_table

    storage_chain = README.parent / "docs" / "storage-chain.md"
    stale = "stale: regenerate with `python -m tenantctl.credentials.keys`"
    assert _block(README.read_text(), "credentials-keys") == key_table(), stale
    assert _block(storage_chain.read_text(), "credentials-keys") == key_table(), stale
