"""`tenantctl secret proxmox-cluster`: the per-tenant Secret capmox reads, `insecure` always written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner, Result

from tenantctl.cli import app
from tenantctl.credentials.capmox import capmox_skips_verification, check_capmox_secret
from tenantctl.credentials.keys import SECRETS, CapmoxKey

TOKEN = "5f3c1c9e-8d0a-4c7e-9a51-2b6f0e4d7c11"
ENV = {"PVE_TOKEN_SECRET": TOKEN}
GOOD = ["acme-capmox", "-n", "tenant-acme", "--url", "https://pve.example:8006", "--token-id", "capmox@pve!capi",
        "--token-secret-env", "PVE_TOKEN_SECRET"]


def run(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(app, ["secret", "proxmox-cluster", *map(str, args)], env=ENV if env is None else env)


def replace(args: list[str], flag: str, value: str) -> list[str]:
    out = list(args)
    out[out.index(flag) + 1] = value
    return out


def test_prints_the_secret_with_every_key_capmox_reads() -> None:
    result = run(*GOOD)
    assert result.exit_code == 0, result.stderr
    doc = yaml.safe_load(result.stdout)
    assert (doc["kind"], doc["metadata"]["name"], doc["metadata"]["namespace"], doc["type"]) == (
        "Secret", "acme-capmox", "tenant-acme", "Opaque")
    assert doc["stringData"] == {"url": "https://pve.example:8006", "token": "capmox@pve!capi", "secret": TOKEN,
                                 "insecure": "false"}
    assert check_capmox_secret(doc["stringData"], spec_insecure=False) == []
    assert TOKEN not in result.stderr


def test_the_keys_written_are_the_keys_of_the_table() -> None:
    capmox = next(s for s in SECRETS if "per tenant" in s.reader)
    assert {k.name for k in capmox.keys} == set(CapmoxKey)


def test_insecure_is_written_true_only_when_asked() -> None:
    doc = yaml.safe_load(run(*GOOD, "--insecure").stdout)
    assert doc["stringData"]["insecure"] == "true"
    assert capmox_skips_verification(doc["stringData"])


def test_a_root_ca_is_written_as_its_pem(fakepve_cafile: str) -> None:
    doc = yaml.safe_load(run(*GOOD, "--root-ca", fakepve_cafile).stdout)
    assert doc["stringData"]["root_ca"] == Path(fakepve_cafile).read_text()
    assert doc["stringData"]["insecure"] == "false"


def test_without_a_root_ca_the_key_is_absent() -> None:
    assert "root_ca" not in yaml.safe_load(run(*GOOD).stdout)["stringData"]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("not a certificate\n", "holds no PEM certificate"),
        ("-----BEGIN CERTIFICATE-----\nbm90IGRlcg==\n-----END CERTIFICATE-----\n", "is not a decodable PEM"),
    ],
)
def test_a_root_ca_that_does_not_decode_is_refused(tmp_path: Path, content: str, why: str) -> None:
    ca = tmp_path / "ca.pem"
    ca.write_text(content)
    result = run(*GOOD, "--root-ca", ca)
    assert result.exit_code == 2
    assert f"--root-ca: '{ca}' {why}" in result.stderr
    assert result.stdout == ""


def test_an_unreadable_root_ca_is_refused(tmp_path: Path) -> None:
    result = run(*GOOD, "--root-ca", tmp_path / "absent.pem")
    assert result.exit_code == 2
    assert "--root-ca: cannot read" in result.stderr


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://pve.example:8006/api2/json", "ends in /api2/json"),
        ("https://pve.example:8006/api2/json/", "ends in /api2/json"),
        ("https://pve.example:8006/pve", "has a path, query or fragment"),
        ("https://pve.example:8006?x=1", "has a path, query or fragment"),
        ("http://pve.example:8006", "is plain http"),
        ("pve.example:8006", "is not an https URL"),
        ("ftp://pve.example", "is not an https URL"),
        ("https://", "is not an https URL"),
        ("https://pve.example:port", "has a port that is not a number"),
    ],
)
def test_a_url_that_is_not_https_host_port_is_refused(url: str, message: str) -> None:
    result = run(*replace(GOOD, "--url", url))
    assert result.exit_code == 2
    assert f"--url: '{url}' {message}" in result.stderr.replace("\n", "")
    assert result.stdout == ""


def test_a_url_without_a_scheme_says_what_to_give() -> None:
    result = run(*replace(GOOD, "--url", "pve.example:8006"))
    assert "give https://host:8006, e.g. https://pve.example:8006" in result.stderr.replace("\n", "")


def test_the_api_suffix_refusal_says_what_to_give_instead() -> None:
    result = run(*replace(GOOD, "--url", "https://pve.example:8006/api2/json"))
    assert "fail with 501; use https://pve.example:8006" in result.stderr.replace("\n", "")


@pytest.mark.parametrize("token_id", ["capmox@pve", "capmox", "capmox@pve!", "@pve!capi"])
def test_a_token_id_must_be_user_realm_token(token_id: str) -> None:
    result = run(*replace(GOOD, "--token-id", token_id))
    assert result.exit_code == 2
    assert f"--token-id: '{token_id}' is not a Proxmox API token id; expected USER@REALM!TOKENNAME (e.g. " \
           "capmox@pve!capi)" in " ".join(result.stderr.split())


@pytest.mark.parametrize("env", [{}, {"PVE_TOKEN_SECRET": ""}])
def test_an_unset_or_empty_variable_is_refused_by_name(env: dict[str, str]) -> None:
    result = run(*GOOD, env=env)
    assert result.exit_code == 2
    assert "--token-secret-env: environment variable PVE_TOKEN_SECRET is unset or empty" in result.stderr


def test_a_secret_with_whitespace_is_refused_by_the_flag_without_its_value() -> None:
    result = run(*GOOD, env={"PVE_TOKEN_SECRET": "abc def"})
    assert result.exit_code == 2
    assert "--token-secret-env: environment variable PVE_TOKEN_SECRET contains whitespace" in result.stderr
    assert "abc def" not in result.stdout + result.stderr


def test_the_secret_passed_as_the_variable_name_is_not_echoed() -> None:
    result = run(*replace(GOOD, "--token-secret-env", TOKEN))
    assert result.exit_code == 2
    assert TOKEN not in result.stdout + result.stderr
    assert ("--token-secret-env: not an environment variable name (value not shown: it may be the secret itself); "
            "pass the NAME of a variable that holds the token secret") in " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("name", "namespace", "path"),
    [("Acme_Capmox", "tenant-acme", "NAME: 'Acme_Capmox'"), ("acme", "tenant.acme", "--namespace: 'tenant.acme'")],
)
def test_name_and_namespace_must_be_valid(name: str, namespace: str, path: str) -> None:
    result = run(name, *replace(GOOD[1:], "-n", namespace))
    assert result.exit_code == 2
    assert path in result.stderr


def test_every_problem_is_reported_at_once() -> None:
    args = replace(replace(GOOD, "--url", "http://pve/api2/json"), "--token-id", "root")
    result = run(*args, env={})
    lines = [line for line in result.stderr.splitlines() if line.startswith("--")]
    assert len(lines) == 4, result.stderr
