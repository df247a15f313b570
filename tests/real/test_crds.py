"""Every CRD tenantctl ships and every upstream CRD it renders against, accepted by the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from real_api import Api
from tenantctl.cli import app
from tenantctl.spec.crds import render_crds

REPO = Path(__file__).resolve().parents[2]


def test_every_upstream_crd_is_established(installed: dict[str, list[str]], shared: Path) -> None:
    files = sorted((shared / "crds").glob("*/*.yaml"))
    assert len(installed["upstream"]) == len(files) >= 30, "one CRD a file"


def test_tenantctls_own_crds_are_established_with_their_cel_rules(installed: dict[str, list[str]], admin: Api) -> None:
    shipped = {c["metadata"]["name"] for c in render_crds()}
    assert shipped <= set(installed["ours"]), installed["ours"]
    for name in shipped:
        crd = admin.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, name)
        assert crd is not None
        conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
        assert conditions == {"NamesAccepted": "True", "Established": "True"}, (name, conditions)


def test_install_into_a_namespace_that_does_not_exist_applies_nothing(
    installed: dict[str, list[str]], admin: Api, management: Any, tmp_path: Path
) -> None:
    """Red on the real server before the check: the CRDs and cluster RBAC were applied, then the tenant's
    Role was refused (404), half an install."""
    tenant = tmp_path / "tenant.yaml"
    tenant.write_text((REPO / "examples" / "proxmox.yaml").read_text().replace("tenant-acme", "tenant-absent"))
    result = CliRunner().invoke(app, ["install", "--apply", "--namespace", "tenantctl-elsewhere", "-f", str(tenant),
                                      "--kubeconfig", str(management.admin_kubeconfig_path)])
    assert result.exit_code == 2, result.output
    assert "namespace tenant-absent: does not exist; create it first (it holds RoleBinding tenantctl-operator, " \
           "Role tenantctl-operator-tct-acme, RoleBinding tenantctl-operator-tct-acme)" in result.output
    assert "applied" not in result.output
    assert admin.get("v1", "Namespace", None, "tenantctl-elsewhere") is None, "nothing was applied"
