"""Golden renders of the examples: any diff here is a user-visible change to review, not to accept blindly.

Regenerate with `pytest tests/render/test_golden.py --snapshot-update` and read the diff.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode
from typer.testing import CliRunner

from tenantctl.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class YamlSnapshot(SingleFileSnapshotExtension):
    _write_mode = WriteMode.TEXT
    file_extension = "yaml"


RENDERS = {
    "kubevirt": ["render", "-f", str(EXAMPLES / "kubevirt.yaml")],
    "kubevirt-observed": [
        "render", "-f", str(EXAMPLES / "kubevirt.yaml"), "--observed", str(EXAMPLES / "observed-kubevirt.yaml"),
    ],
    "proxmox": ["render", "-f", str(EXAMPLES / "proxmox.yaml")],
    "proxmox-observed": [
        "render", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(EXAMPLES / "observed-proxmox.yaml"),
    ],
    "proxmox-spread-observed": [
        "render", "-f", str(EXAMPLES / "proxmox-spread.yaml"), "--observed", str(EXAMPLES / "observed-proxmox.yaml"),
    ],
    "kubevirt-in-tenant": [
        "render", "-f", str(EXAMPLES / "kubevirt.yaml"), "--observed", str(EXAMPLES / "observed-kubevirt.yaml"),
        "--in-tenant",
    ],
    "proxmox-in-tenant": [
        "render", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(EXAMPLES / "observed-proxmox.yaml"),
        "--in-tenant",
    ],
}


@pytest.mark.parametrize("name", RENDERS)
def test_render_matches_golden(name: str, snapshot: SnapshotAssertion) -> None:
    result = CliRunner().invoke(app, RENDERS[name])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == snapshot(extension_class=YamlSnapshot)
