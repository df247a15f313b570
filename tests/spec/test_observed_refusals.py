"""`--observed` is refused like a spec field: CAs that are no PEM certificates, an endpoint that is no host."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
from syrupy.assertion import SnapshotAssertion
from typer.testing import CliRunner

from tenant_support import EXAMPLES, load_example
from tenantctl.cli import app


def b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


NOT_A_CERTIFICATE = b64("-----BEGIN CERTIFICATE-----\nZXhhbXBsZQ==\n-----END CERTIFICATE-----\n")
BAD_CAS: dict[str, tuple[str, str]] = {
    "base64 cut short": ("LS0tLS1CRUdJTi", "is not base64 of a PEM certificate bundle"),
    "base64 of no PEM block": (b64("just text"), "decodes to no PEM '-----BEGIN CERTIFICATE-----' block"),
    "a block that is no certificate": (NOT_A_CERTIFICATE, "is not a decodable X.509 certificate"),
}


@pytest.mark.parametrize("field", ["kubernetesCA", "talosCA"])
@pytest.mark.parametrize(("value", "message"), BAD_CAS.values(), ids=BAD_CAS.keys())
def test_a_bad_ca_is_refused_with_its_path(
    tmp_path: Path, field: str, value: str, message: str, snapshot: SnapshotAssertion
) -> None:
    (observed,) = load_example("observed-proxmox.yaml")
    observed[field] = value
    path = tmp_path / "observed.yaml"
    path.write_text(yaml.safe_dump(observed))
    result: Any = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = [x for x in result.stderr.splitlines() if x.startswith(f"ObservedState/acme.{field}: ")]
    assert message in line
    assert result.stderr.replace(str(tmp_path), "<tmp>") == snapshot, "every problem, word for word"


def test_the_example_cas_are_accepted() -> None:
    result = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"),
                                      "--observed", str(EXAMPLES / "observed-proxmox.yaml")])
    assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize(("endpoint", "refused"), [
    ("192.0.2.1000", True),          # RFC 1123 §2.1: never a host name; a mistyped address
    ("10.0.0", True),
    ("192.0.2.10", False),           # a literal address
    ("api.acme.example", False),
    ("1api.example", False),         # a leading digit is a host name since RFC 1123
    ("2001:db8::1", False),
])
def test_an_endpoint_of_digits_and_dots_that_is_no_address_is_refused(
    tmp_path: Path, endpoint: str, refused: bool
) -> None:
    (observed,) = load_example("observed-proxmox.yaml")
    observed["endpoint"] = endpoint
    path = tmp_path / "observed.yaml"
    path.write_text(yaml.safe_dump(observed))
    result: Any = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(path)])
    lines = [x for x in result.stderr.splitlines() if x.startswith("ObservedState/acme.endpoint: ")]
    if refused:
        assert result.exit_code == 2 and lines and "a mistyped address" in lines[0]
    else:
        assert not lines, result.stderr


def test_a_flood_of_problems_prints_the_first_fifty_and_counts_the_rest(tmp_path: Path) -> None:
    from tenantctl.cli.support import SHOWN

    path = tmp_path / "flood.yaml"
    path.write_text("--- {}\n" * 200)
    result: Any = CliRunner().invoke(app, ["validate", "-f", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == SHOWN + 1 and SHOWN == 50
    assert lines[0].startswith("document[document 0].kind: ")
    assert lines[-1] == "… and 150 more (150 errors), not shown"


def test_more_documents_than_a_file_may_hold_are_refused_before_any_is_judged(tmp_path: Path) -> None:
    from tenantctl.documents import INPUT_LIMITS

    path = tmp_path / "flood.yaml"
    path.write_text("--- {}\n" * (INPUT_LIMITS.documents + 1))
    result: Any = CliRunner().invoke(app, ["validate", "-f", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"{path}: more than 1000 YAML documents; at most 1000 are accepted in one file: split it"]
    path.write_text("--- {}\n" * INPUT_LIMITS.documents)
    judged: Any = CliRunner().invoke(app, ["validate", "-f", str(path)])
    assert "YAML documents" not in judged.stderr
