"""The init script that composes a controller's config from its credentials Secret, run for real under
`sh`: values are data whatever they contain, a missing or multi-line key stops the Pod, and the script
is one constant, so no tenant-controlled text ever reaches the shell."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tenant_support import load_example
from tenantctl.render import render_tenant
from tenantctl.render.proxmox_config import CONFIG_SCRIPT, CREDENTIAL_KEYS
from tenantctl.spec import parse_tenant_documents

pytestmark = pytest.mark.skipif(shutil.which("sh") is None, reason="needs a POSIX shell")

GOOD = {
    "url": "https://pve.example:8006/api2/json",
    "token_id": "ccm@pve!tenant-acme",
    "token_secret": "0b6c1f2e-0000-4000-8000-000000000000",
    "region": "pve-cluster",
}


def compose(
    tmp_path: Path, secret: dict[str, str], insecure: str = "false", features: str = "features:\n  a: 1"
) -> Any:
    creds, out = tmp_path / "creds", tmp_path / "out"
    creds.mkdir()
    out.mkdir()
    for key, value in secret.items():
        (creds / key).write_text(value)
    script = CONFIG_SCRIPT.replace("/proxmox-credentials", str(creds)).replace("/etc/proxmox", str(out))
    result = subprocess.run(
        ["sh", "-c", script],
        env={"PATH": "/usr/bin:/bin", "PVE_INSECURE": insecure, "PVE_FEATURES": features},
        capture_output=True,
        text=True,
        check=False,
    )
    config = out / "config.yaml"
    return result, (yaml.safe_load(config.read_text()) if config.exists() else None)


def test_composes_the_config_the_controllers_read(tmp_path: Path) -> None:
    result, config = compose(tmp_path, {k: v + "\n" for k, v in GOOD.items()}, "true", "features:\n  provider: capmox")
    assert result.returncode == 0, result.stderr
    assert config == {"clusters": [{**GOOD, "insecure": True}], "features": {"provider": "capmox"}}


@pytest.mark.parametrize(
    "hostile",
    ["it's", "a: b", "#comment", "$(touch pwned)", "`touch pwned`", "'; touch pwned; '", "{x: [1]}", "\\n", "%s%s"],
)
def test_a_value_is_data_whatever_it_contains(tmp_path: Path, hostile: str) -> None:
    result, config = compose(tmp_path, {**GOOD, "token_secret": hostile, "region": hostile})
    assert result.returncode == 0, result.stderr
    assert config["clusters"][0]["token_secret"] == hostile
    assert config["clusters"][0]["region"] == hostile
    assert not list(tmp_path.rglob("pwned")) and not Path("pwned").exists()


@pytest.mark.parametrize("key", CREDENTIAL_KEYS)
def test_a_missing_key_stops_the_pod(tmp_path: Path, key: str) -> None:
    secret = {k: v for k, v in GOOD.items() if k != key}
    result, _ = compose(tmp_path, secret)
    assert result.returncode != 0
    assert f"no key '{key}'" in result.stderr


def test_a_multi_line_value_stops_the_pod(tmp_path: Path) -> None:
    result, _ = compose(tmp_path, {**GOOD, "token_id": "a\nregion: injected"})
    assert result.returncode != 0
    assert "spans several lines" in result.stderr


def test_insecure_must_be_a_boolean(tmp_path: Path) -> None:
    result, _ = compose(tmp_path, GOOD, insecure="true\nclusters: []")
    assert result.returncode != 0


def test_config_file_is_private_to_its_owner(tmp_path: Path) -> None:
    compose(tmp_path, GOOD)
    assert (tmp_path / "out" / "config.yaml").stat().st_mode & 0o077 == 0


def test_script_is_one_constant_for_every_cluster() -> None:
    """Only env values differ between clusters; the script text never embeds a spec value."""
    docs = load_example("proxmox.yaml")
    docs[0]["metadata"]["name"] = "zz-other"
    docs[1]["spec"]["cluster"] = "zz-other"
    scripts = set()
    for d in (load_example("proxmox.yaml"), docs):
        for o in render_tenant(parse_tenant_documents(d)):
            for init in o.get("spec", {}).get("template", {}).get("spec", {}).get("initContainers", []):
                scripts.add(init["args"][1])
    assert scripts == {CONFIG_SCRIPT}


def test_no_kubernetes_variable_reference_to_an_env_name() -> None:
    """Kubernetes expands $(NAME) in args when NAME is an env var; the script must not use that form."""
    assert "$(PVE_" not in CONFIG_SCRIPT
