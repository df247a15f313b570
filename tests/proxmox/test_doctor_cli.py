"""`tenantctl doctor proxmox` from the command line: secret from the environment, exit codes, JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakepve import FakePve  # type: ignore[import-untyped]
from typer.testing import CliRunner

from tenantctl.cli import app

TOKEN_ID = "capmox@pve!capi"
SECRET = "s3cr3t-token-value"


@pytest.fixture
def spec_file(tmp_path: Path, spec_documents: list[dict[str, Any]]) -> Path:
    path = tmp_path / "tenant.yaml"
    path.write_text(yaml.safe_dump_all(spec_documents), encoding="utf-8")
    return path


def invoke(args: list[str], secret: str | None = SECRET) -> Any:
    env = {"PROXMOX_TOKEN_SECRET": secret or "", "COLUMNS": "400"}
    return CliRunner().invoke(app, ["doctor", "proxmox", *args], env=env)


def base_args(stand: FakePve, spec_file: Path, cafile: str) -> list[str]:
    return ["-f", str(spec_file), "--url", stand.url, "--token-id", TOKEN_ID, "--ca-file", cafile]


def test_clean_stand_exits_0_with_json(stand: FakePve, spec_file: Path, fakepve_cafile: str) -> None:
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "-o", "json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True and report["counts"]["FAIL"] == 0
    assert SECRET not in result.output


def test_a_fail_exits_1_and_the_table_names_it(stand: FakePve, spec_file: Path, fakepve_cafile: str) -> None:
    stand.pools.pop("tenant-acme")
    result = invoke(base_args(stand, spec_file, fakepve_cafile))
    assert result.exit_code == 1
    assert "pveum pool add tenant-acme" in result.stdout and "FAIL" in result.stdout


def test_missing_secret_is_refused_with_exit_2(stand: FakePve, spec_file: Path, fakepve_cafile: str) -> None:
    result = invoke(base_args(stand, spec_file, fakepve_cafile), secret=None)
    assert result.exit_code == 2
    assert "PROXMOX_TOKEN_SECRET" in result.stderr


def test_bad_token_id_is_refused_with_exit_2(stand: FakePve, spec_file: Path, fakepve_cafile: str) -> None:
    args = base_args(stand, spec_file, fakepve_cafile)
    args[args.index(TOKEN_ID)] = "capmox@pve"
    result = invoke(args)
    assert result.exit_code == 2
    assert "--token-id: 'capmox@pve' is not of the form user@realm!tokenname" in result.stderr


def test_unreadable_spec_is_refused_with_exit_2(tmp_path: Path) -> None:
    result = invoke(["-f", str(tmp_path / "absent.yaml"), "--url", "https://pve:8006", "--token-id", TOKEN_ID])
    assert result.exit_code == 2
    assert "cannot read file" in result.stderr


def test_kubevirt_only_input_is_refused_with_exit_2(tmp_path: Path, spec_documents: list[dict[str, Any]]) -> None:
    cluster = spec_documents[0]
    cluster["spec"] = {"substrate": "kubevirt"}
    path = tmp_path / "kv.yaml"
    path.write_text(yaml.safe_dump(cluster), encoding="utf-8")
    result = invoke(["-f", str(path), "--url", "https://pve:8006", "--token-id", TOKEN_ID])
    assert result.exit_code == 2
    assert "none on substrate proxmox" in result.stderr


def test_controller_option_limits_the_privilege_rows(
    stand: FakePve, spec_file: Path, fakepve_cafile: str
) -> None:
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "--controller", "csi", "-o", "json"])
    subjects = [r["subject"] for r in json.loads(result.stdout)["rows"] if r["check"] == "privileges"]
    assert subjects == ["csi"]
