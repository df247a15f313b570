"""`e2e render-fixture`: defaults from code, every unset required variable named, no placeholder left."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.e2e.fixture import STAND_VARIABLES, render_fixture, stand_values
from tenantctl.problems import InvalidInput
from tenantctl.spec import parse_tenant_documents

SHIPPED = Path(__file__).resolve().parents[2] / "src" / "tenantctl" / "e2e" / "fixtures" / "proxmox-stand.yaml"
REQUIRED = {v.name for v in STAND_VARIABLES if v.required}
STAND = {
    "TENANTCTL_KUBECONFIG": "/etc/stand/mgmt.conf",
    "TENANTCTL_PVE_URL": "https://pve.stand.example:8006",
    "TENANTCTL_PVE_TOKEN_ID": "e2e@pve!harness",
    "TENANTCTL_PVE_NODE": "pve1",
    "TENANTCTL_PVE_STORAGE": "tenant-zfs",
    "TENANTCTL_PVE_POOL": "stand-e2e",
    "TENANTCTL_PVE_ADDRESSES": "198.51.100.10-198.51.100.20",
    "TENANTCTL_PVE_GATEWAY": "198.51.100.1",
    "TENANTCTL_PVE_DNS": "198.51.100.53",
    "PROXMOX_TOKEN_SECRET": "not-rendered",
}


def test_the_shipped_fixture_renders_to_a_valid_tenant() -> None:
    text = render_fixture(SHIPPED.read_text(encoding="utf-8"), STAND)
    assert "${" not in text and STAND["PROXMOX_TOKEN_SECRET"] not in text
    tenant = parse_tenant_documents(list(yaml.safe_load_all(text)))
    tc = tenant.clusters[0]
    assert tc.spec.proxmox is not None and tc.spec.proxmox.allowed_nodes == ["pve1"]
    pool = tenant.pools[0].spec.proxmox
    assert pool is not None and pool.pool == "stand-e2e" and pool.template_tags == ["talos"]


def test_defaults_come_from_code_and_the_environment_wins() -> None:
    assert stand_values(STAND)["TENANTCTL_PVE_BRIDGE"] == "vmbr0"
    assert stand_values({**STAND, "TENANTCTL_PVE_BRIDGE": "vmbr7"})["TENANTCTL_PVE_BRIDGE"] == "vmbr7"


def test_every_unset_required_variable_is_named_at_once() -> None:
    gone = ("TENANTCTL_PVE_POOL", "TENANTCTL_PVE_STORAGE", "PROXMOX_TOKEN_SECRET")
    env = {k: v for k, v in STAND.items() if k not in gone}
    env["TENANTCTL_KUBECONFIG"] = ""
    with pytest.raises(InvalidInput) as info:
        render_fixture(SHIPPED.read_text(encoding="utf-8"), env)
    named = {p.path for p in info.value.problems}
    assert named == {*gone, "TENANTCTL_KUBECONFIG"}


def test_the_required_set_is_the_stand_not_an_address() -> None:
    assert {"TENANTCTL_KUBECONFIG", "TENANTCTL_PVE_URL", "TENANTCTL_PVE_TOKEN_ID",
                        "TENANTCTL_PVE_STORAGE", "TENANTCTL_PVE_POOL", "TENANTCTL_PVE_GATEWAY",
                        "TENANTCTL_PVE_ADDRESSES", "TENANTCTL_PVE_DNS"} <= REQUIRED


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("pool: ${TENANTCTL_PVE_POOL:-stand}", "shell defaults are not expanded"),
        ("pool: ${COZY_PVE_POOL}", "not a stand variable"),
        ("pool: $TENANTCTL_PVE_POOL", "write ${NAME}"),
        ("secret: ${PROXMOX_TOKEN_SECRET}", "a secret never goes into a fixture"),
    ],
    ids=["shell default", "unknown variable", "bare dollar form", "the token secret"],
)
def test_a_placeholder_that_would_be_left_is_refused(line: str, message: str) -> None:
    with pytest.raises(InvalidInput) as info:
        render_fixture(f"kind: X\n{line}\n", STAND, "fixture.yaml")
    (problem,) = info.value.problems
    assert problem.path == "fixture.yaml:2" and message in problem.message


def test_a_value_that_brings_a_placeholder_is_refused() -> None:
    with pytest.raises(InvalidInput) as info:
        render_fixture("pool: ${TENANTCTL_PVE_POOL}\n", {**STAND, "TENANTCTL_PVE_POOL": "${HOME}"})
    assert "brought a placeholder" in info.value.problems[0].message


def test_cli_renders_and_refuses_with_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*REQUIRED, "PROXMOX_TOKEN_SECRET"):
        monkeypatch.delenv(name, raising=False)
    runner = CliRunner()
    out = tmp_path / "out.yaml"
    ok = runner.invoke(app, ["e2e", "render-fixture", "-f", str(SHIPPED), "--out", str(out)], env=STAND)
    assert ok.exit_code == 0, ok.output
    assert "stand-e2e" in (tmp_path / "out.yaml").read_text(encoding="utf-8")
    refused = runner.invoke(app, ["e2e", "render-fixture", "-f", str(SHIPPED)],
                            env={**STAND, "TENANTCTL_PVE_POOL": ""})
    assert refused.exit_code == 2
    assert "TENANTCTL_PVE_POOL: required stand variable is unset" in refused.stderr
    missing = runner.invoke(app, ["e2e", "render-fixture", "-f", str(tmp_path / "absent.yaml")], env=STAND)
    assert missing.exit_code == 2 and "cannot read file" in missing.stderr


def test_e2e_doc_lists_every_stand_variable() -> None:
    text = (SHIPPED.parents[4] / "docs" / "e2e.md").read_text(encoding="utf-8")
    for var in STAND_VARIABLES:
        row = next((line for line in text.splitlines() if line.startswith(f"| `{var.name}` |")), None)
        assert row is not None, var.name
        assert ("| yes |" in row) is var.required and (var.default is None or f"`{var.default}`" in row)
