"""`tenantctl doctor proxmox` from the command line: secret from the environment, exit codes, JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from fakepve import FakePve  # type: ignore[import-untyped]
from syrupy.assertion import SnapshotAssertion
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


def _credentials_file(tmp_path: Path, stand: FakePve, **overrides: str | None) -> Path:
    data: dict[str, str | None] = {"url": stand.url, "token": TOKEN_ID, "secret": SECRET, "insecure": "false",
                                   **overrides}
    path = tmp_path / "capmox-secret.yaml"
    doc = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "capmox-acme", "namespace": "tenant-acme"},
           "stringData": {k: v for k, v in data.items() if v is not None}}
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _credential_rows(result: Any) -> list[dict[str, Any]]:
    return [r for r in json.loads(result.stdout)["rows"] if r["check"] == "credentials"]


def test_a_complete_credentials_secret_passes(
    stand: FakePve, spec_file: Path, fakepve_cafile: str, tmp_path: Path
) -> None:
    secret = _credentials_file(tmp_path, stand)
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "--credentials-secret", str(secret), "-o", "json"])
    assert result.exit_code == 0, result.output
    rows = _credential_rows(result)
    assert [(r["status"], r["subject"]) for r in rows] == [("PASS", "Secret tenant-acme/capmox-acme")]
    assert SECRET not in result.output


@pytest.mark.parametrize(
    ("overrides", "status", "seen"),
    [
        ({"insecure": None}, "FAIL", "key insecure is missing, so capmox v0.7.7 skips TLS verification"),
        ({"insecure": "true"}, "FAIL", "key insecure makes capmox skip TLS verification"),
        ({"url": None}, "FAIL", "key url is missing"),
        ({"secret": None}, "FAIL", "key secret is missing"),
        ({"url": "https://pve.example:8006/api2/json"}, "FAIL", "key url: 'https://pve.example:8006/api2/json' ends"),
        ({"url": "https://other.example:8006"}, "WARN", "key url names another URL than --url"),
        ({"token": "other@pve!capi"}, "WARN", "key token names another token id than --token-id"),
    ],
)
def test_a_credentials_secret_fault_is_a_row_naming_the_key(
    stand: FakePve, spec_file: Path, fakepve_cafile: str, tmp_path: Path,
    overrides: dict[str, str | None], status: str, seen: str, snapshot: SnapshotAssertion,
) -> None:
    secret = _credentials_file(tmp_path, stand, **overrides)
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "--credentials-secret", str(secret), "-o", "json"])
    assert result.exit_code == (1 if status == "FAIL" else 0), result.output
    rows = _credential_rows(result)
    assert any(r["status"] == status and r["seen"].startswith(seen) for r in rows), rows
    assert SECRET not in result.output
    assert rows == snapshot, "every credentials row, word for word"


def test_a_secret_naming_another_url_says_which_one_was_checked(
    stand: FakePve, spec_file: Path, fakepve_cafile: str, tmp_path: Path
) -> None:
    secret = _credentials_file(tmp_path, stand, url="https://other.example:8006")
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "--credentials-secret", str(secret), "-o", "json"])
    [row] = [r for r in _credential_rows(result) if r["status"] == "WARN"]
    assert (row["seen"], row["advice"]) == ("key url names another URL than --url",
                                           "the doctor checked --url; give the URL the Secret holds")


def test_a_secret_url_fault_carries_the_fix_for_it(
    stand: FakePve, spec_file: Path, fakepve_cafile: str, tmp_path: Path
) -> None:
    secret = _credentials_file(tmp_path, stand, url="https://pve.example:8006/api2/json")
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "--credentials-secret", str(secret), "-o", "json"])
    [row] = [r for r in _credential_rows(result) if r["seen"].startswith("key url: ")]
    assert row["advice"].startswith("drop /api2/json: capmox appends it itself"), row


def test_a_credentials_file_without_exactly_one_secret_is_refused(
    stand: FakePve, spec_file: Path, fakepve_cafile: str, tmp_path: Path
) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump_all([{"kind": "Secret"}, {"kind": "Secret"}]), encoding="utf-8")
    result = invoke([*base_args(stand, spec_file, fakepve_cafile), "--credentials-secret", str(path)])
    assert result.exit_code == 2
    assert "--credentials-secret:" in result.stderr and "holds 2 Secret documents" in result.stderr
