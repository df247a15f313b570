"""`providers secret proxmox`: the capmox credentials Secret, the token secret read from the environment only."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from typer.testing import Result

from providers.support import PROXMOX_ON, Cli

TOKEN = "5f3c1c9e-8d0a-4c7e-9a51-2b6f0e4d7c11"
ENV = {"PVE_TOKEN_SECRET": TOKEN}
GOOD = ["--url", "https://pve.example:8006", "--token-id", "capmox@pve!capi", "--token-secret-env", "PVE_TOKEN_SECRET"]


def secret(cli: Cli, *args: str | Path, env: dict[str, str] | None = None) -> Result:
    return cli("providers", "secret", "proxmox", *args, env=ENV if env is None else env)


def replace(args: list[str], flag: str, value: str) -> list[str]:
    out = list(args)
    out[out.index(flag) + 1] = value
    return out


def test_prints_the_secret_capmox_reads(cli: Cli) -> None:
    result = secret(cli, *GOOD)
    assert result.exit_code == 0, result.stderr
    assert yaml.safe_load(result.stdout) == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "capmox-credentials", "namespace": "capmox-system",
                     "labels": {"app.kubernetes.io/managed-by": "tenantctl"}},
        "type": "Opaque",
        "stringData": {"PROXMOX_URL": "https://pve.example:8006", "PROXMOX_TOKEN": "capmox@pve!capi",
                       "PROXMOX_SECRET": TOKEN},
    }


def test_name_and_namespace_can_be_chosen(cli: Cli) -> None:
    doc = yaml.safe_load(secret(cli, *GOOD, "--name", "pve", "--namespace", "secrets").stdout)
    assert (doc["metadata"]["name"], doc["metadata"]["namespace"]) == ("pve", "secrets")


@pytest.mark.parametrize("suffix", ["/api2/json", "/api2/json/"])
def test_a_url_ending_in_api2_json_is_refused_with_the_reason(cli: Cli, suffix: str) -> None:
    url = f"https://pve.example:8006{suffix}"
    result = secret(cli, *replace(GOOD, "--url", url))
    assert result.exit_code == 2
    err = result.stderr.replace("\n", "")
    assert f"--url: '{url}' ends in /api2/json; drop /api2/json: capmox appends it itself" in err
    assert "fail with 501; use https://pve.example:8006" in err
    assert result.stdout == ""


@pytest.mark.parametrize("url", ["pve.example:8006", "ftp://pve.example", "https://"])
def test_a_url_that_is_not_https_is_refused(cli: Cli, url: str) -> None:
    result = secret(cli, *replace(GOOD, "--url", url))
    assert result.exit_code == 2
    assert f"--url: '{url}' is not an https URL" in result.stderr


def test_plain_http_is_refused_as_for_the_per_tenant_secret(cli: Cli) -> None:
    result = secret(cli, *replace(GOOD, "--url", "http://pve.example:8006"))
    assert result.exit_code == 2
    assert "--url: 'http://pve.example:8006' is plain http; use https://pve.example:8006" in result.stderr


@pytest.mark.parametrize("token_id", ["capmox@pve", "capmox", "capmox@pve!", "@pve!capi"])
def test_a_token_id_must_be_user_realm_token(cli: Cli, token_id: str) -> None:
    result = secret(cli, *replace(GOOD, "--token-id", token_id))
    assert result.exit_code == 2
    assert f"--token-id: '{token_id}' is not a Proxmox API token id; expected USER@REALM!TOKENNAME" in result.stderr


def test_an_unset_variable_is_refused_by_name(cli: Cli) -> None:
    result = secret(cli, *GOOD, env={})
    assert result.exit_code == 2
    assert "--token-secret-env: environment variable PVE_TOKEN_SECRET is unset or empty" in result.stderr


def test_an_empty_variable_is_refused(cli: Cli) -> None:
    result = secret(cli, *GOOD, env={"PVE_TOKEN_SECRET": ""})
    assert "PVE_TOKEN_SECRET is unset or empty" in result.stderr


def test_the_secret_itself_passed_as_the_variable_name_is_not_echoed(cli: Cli) -> None:
    result = secret(cli, *replace(GOOD, "--token-secret-env", TOKEN))
    assert result.exit_code == 2
    assert "not an environment variable name (value not shown" in result.stderr
    assert TOKEN not in result.stdout + result.stderr


def test_whitespace_in_the_secret_is_refused_without_showing_it(cli: Cli) -> None:
    result = secret(cli, *GOOD, env={"PVE_TOKEN_SECRET": TOKEN + "\n"})
    assert result.exit_code == 2
    assert "PVE_TOKEN_SECRET contains whitespace (value not shown)" in result.stderr
    assert TOKEN not in result.stderr


def test_there_is_no_option_taking_the_secret_itself(cli: Cli) -> None:
    result = cli("providers", "secret", "proxmox", "--help")
    assert "--token-secret " not in result.stdout and "--token-secret-env" in result.stdout


def test_every_problem_is_reported_at_once(cli: Cli) -> None:
    args = replace(replace(GOOD, "--url", "https://pve/api2/json"), "--token-id", "root")
    result = secret(cli, *args, env={})
    assert len([line for line in result.stderr.splitlines() if line.startswith("--")]) == 3


def test_the_platform_names_the_secret(cli: Cli, write_platform: Callable[..., Path]) -> None:
    spec = {**PROXMOX_ON, "packages": {"infrastructure-proxmox": {"credentialsSecret": {"name": "pve-token"}}}}
    doc = yaml.safe_load(secret(cli, *GOOD, "-f", write_platform(spec)).stdout)
    assert (doc["metadata"]["name"], doc["metadata"]["namespace"]) == ("pve-token", "capmox-system")


def test_the_platform_namespace_is_used_when_given(cli: Cli, write_platform: Callable[..., Path]) -> None:
    settings = {"credentialsSecret": {"name": "a", "namespace": "b"}}
    spec = {**PROXMOX_ON, "packages": {"infrastructure-proxmox": settings}}
    doc = yaml.safe_load(secret(cli, *GOOD, "-f", write_platform(spec)).stdout)
    assert (doc["metadata"]["name"], doc["metadata"]["namespace"]) == ("a", "b")


def test_file_and_explicit_names_conflict(cli: Cli, write_platform: Callable[..., Path]) -> None:
    result = secret(cli, *GOOD, "-f", write_platform(PROXMOX_ON), "--name", "x", "--namespace", "y")
    assert result.exit_code == 2
    assert "--name: 'x' given together with --filename" in result.stderr
    assert "--namespace: 'y' given together with --filename" in result.stderr


def test_a_platform_without_credentials_has_no_secret_to_print(cli: Cli, write_platform: Callable[..., Path]) -> None:
    result = secret(cli, *GOOD, "-f", write_platform())
    assert result.exit_code == 2
    assert "Platform/default.spec.packages.infrastructure-proxmox.credentialsSecret.name: not set" in result.stderr
