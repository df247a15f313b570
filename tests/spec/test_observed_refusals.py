"""`--observed` CAs are refused like a spec field when they are not base64 PEM certificates."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import yaml
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
def test_a_bad_ca_is_refused_with_its_path(tmp_path: Path, field: str, value: str, message: str) -> None:
    (observed,) = load_example("observed-proxmox.yaml")
    observed[field] = value
    path = tmp_path / "observed.yaml"
    path.write_text(yaml.safe_dump(observed))
    result: Any = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(path)])
    assert result.exit_code == 2 and result.stdout == ""
    (line,) = [x for x in result.stderr.splitlines() if x.startswith(f"ObservedState/acme.{field}: ")]
    assert message in line


def test_the_example_cas_are_accepted() -> None:
    result = CliRunner().invoke(app, ["render", "-f", str(EXAMPLES / "proxmox.yaml"),
                                      "--observed", str(EXAMPLES / "observed-proxmox.yaml")])
    assert result.exit_code == 0, result.stderr
