"""Every example render is judged by the upstream CRDs (schema + CEL) and Kubernetes' core schemas."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tenant_support import EXAMPLES, load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.spec import parse_observed, parse_tenant_documents
from tenantctl.validate import DEFAULT_KUBERNETES_VERSION
from tenantctl.validate.core import schema_version

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


def _proxmox_objects() -> int:
    """How many objects the proxmox example with its observations renders: what validate must account for."""
    obs = parse_observed(load_example("observed-proxmox.yaml"))
    return len(render_tenant(parse_tenant_documents(load_example("proxmox.yaml")), obs))


def test_validate_command_on_the_proxmox_example(shared: Path) -> None:
    result = CliRunner().invoke(app, [
        "validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(EXAMPLES / "observed-proxmox.yaml"),
        "--crds", str(shared / "crds"),
    ])
    assert result.exit_code == 0, result.stderr
    found = re.fullmatch(r"ok: (\d+) objects checked \((\d+) against Kubernetes \S+ core schemas, (\d+) against "
                         r"the CRDs in \S+; (\d+) objects their controllers build from them, judged too\)\n",
                         result.stdout)
    assert found, result.stdout
    total, core, crds, derived = map(int, found.groups())
    assert total == core + crds == _proxmox_objects() and core > 0 and crds > 0
    # The Machine, ProxmoxMachine and TalosConfig Cluster API builds from the example's one pool.
    assert derived == 3
    assert "not checked" not in result.stderr


def test_validate_without_crds_says_what_it_did_not_check() -> None:
    """Exit 0 (what was judged passed) with the unchecked kinds named as a warning: never a bare `ok`."""
    result = CliRunner().invoke(app, [
        "validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--observed", str(EXAMPLES / "observed-proxmox.yaml"),
    ])
    assert result.exit_code == 0, result.stderr
    core = schema_version(DEFAULT_KUBERNETES_VERSION)
    found = re.fullmatch(rf"ok: (\d+) objects checked \(\1 against Kubernetes {re.escape(core)} core schemas, "
                         r"no upstream CRDs\)\n", result.stdout)
    assert found, result.stdout
    (gap,) = result.stderr.splitlines()
    unchecked = re.fullmatch(r"warning: validate: (\d+) objects not judged: the upstream CRDs are not pulled; run "
                             r"`tenantctl crds pull` \(once\)", gap)
    assert unchecked, gap
    assert int(found[1]) + int(unchecked[1]) == _proxmox_objects()


def test_validate_command_reports_what_a_crd_refuses(shared: Path, tmp_path: Path) -> None:
    """A CRD directory that lacks a rendered kind is a problem, named per object, exit 2."""
    crds = tmp_path / "crds"
    crds.mkdir()
    (crds / "only-capi").symlink_to(shared / "crds" / "cluster-api-v1.10.1")
    result = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--crds", str(crds)])
    assert result.exit_code == 2
    assert "ProxmoxCluster/acme" in result.stderr
    (gap,) = [line for line in result.stderr.splitlines() if line.startswith("--crds: ")]
    assert f"objects not checked: no CRD in {crds} for " in gap
    assert "infrastructure.cluster.x-k8s.io/v1alpha1 ProxmoxCluster" in gap


def test_a_deprecated_crd_version_warns_and_validate_still_passes(shared: Path, tmp_path: Path) -> None:
    """A warning is no refusal: the apiserver serves a deprecated version and says so; so does validate."""
    crds = tmp_path / "crds"
    shutil.copytree(shared / "crds", crds)
    crd_file = crds / "capmox-v0.7.7" / "infrastructure.cluster.x-k8s.io_proxmoxclusters.yaml"
    crd = yaml.safe_load(crd_file.read_text())
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1"]
    version.update(deprecated=True, deprecationWarning="v1alpha1 ProxmoxCluster is going away")
    crd_file.write_text(yaml.safe_dump(crd))
    result = CliRunner().invoke(app, ["validate", "-f", str(EXAMPLES / "proxmox.yaml"), "--crds", str(crds)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.startswith("ok: ")
    assert result.stderr == "warning: ProxmoxCluster/acme: v1alpha1 ProxmoxCluster is going away\n"
