"""Every example render is judged by the upstream CRDs (schema + CEL) and Kubernetes' core schemas."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tenant_support import EXAMPLES, load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.spec import parse_observed, parse_tenant_documents

CASES = [("kubevirt.yaml", None), ("kubevirt.yaml", "observed-kubevirt.yaml"),
         ("proxmox.yaml", None), ("proxmox.yaml", "observed-proxmox.yaml")]


@pytest.mark.parametrize(("example", "observed"), CASES)
def test_example_renders_pass_the_upstream_schemas(
    example: str, observed: str | None, assert_valid: Callable[[list[dict[str, Any]]], None]
) -> None:
    obs = parse_observed(load_example(observed)) if observed else None
    tenant = parse_tenant_documents(load_example(example))
    assert_valid(render_tenant(tenant, obs))
    if obs:
        for cluster in tenant.clusters:
            assert_valid(render_tenant_bootstrap(cluster, obs[(cluster.metadata.namespace, cluster.metadata.name)]))


def test_validate_command_on_the_proxmox_example(shared: Path) -> None:
    result = CliRunner().invoke(app, [
        "validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(EXAMPLES / "observed-proxmox.yaml"),
        "--crds", str(shared / "crds"),
    ])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "ok\n"


def test_validate_command_reports_what_a_crd_refuses(shared: Path, tmp_path: Path) -> None:
    """A CRD directory that lacks a rendered kind is a problem, named per object, exit 2."""
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "only-capi").symlink_to(shared / "crds" / "cluster-api-v1.10.1")
    result = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--crds", str(crds)])
    assert result.exit_code == 2
    assert "ProxmoxCluster/acme" in result.stderr
