"""An operator process killed with SIGKILL in the middle of creating a tenant, then started again, on the
real servers: the new process finishes from what the cluster holds, and the inventory is exactly the
render (nothing missing, nothing twice, nothing stray). The operator runs as `tenantctl operator`, a
child process with the ServiceAccount's kubeconfig, as in its pod."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from real_api import Api, wait_for
from real_control_plane import ControlPlane
from real_seed import OPERATOR_NAMESPACE, OPERATOR_SA, condition, seed_control_plane, seed_tenant
from tenant_support import load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(300), pytest.mark.process]

NS = "crash-tenant"
TC = ("tenantctl.io/v1alpha1", "TenantCluster")


def _operator(kubeconfig: Path, log: Path) -> subprocess.Popen[bytes]:
    command = [str(Path(sys.executable).with_name("tenantctl")), "operator", "--kubeconfig", str(kubeconfig),
               "--requeue", "1s", "--resync", "30"]
    with log.open("ab") as out:
        return subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


@pytest.fixture()
def kubeconfig(management: ControlPlane, tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "operator.kubeconfig"
    path.write_text(yaml.safe_dump(management.kubeconfig_for(OPERATOR_NAMESPACE, OPERATOR_SA)))
    yield path


def _labelled(admin: Api, kinds: set[tuple[str, str]]) -> set[tuple[str, str]]:
    found = set()
    for api_version, kind in kinds:
        namespaced = admin.plural(api_version, kind)[1]
        for obj in admin.list(api_version, kind, NS if namespaced else None, "tenantctl.io/cluster=acme"):
            if not namespaced or obj["metadata"]["namespace"] == NS:
                found.add((kind, obj["metadata"]["name"]))
    return found


def test_a_tenant_created_across_a_sigkill_ends_with_exactly_its_render(
    installed: Any, admin: Api, management: ControlPlane, tenant_plane: ControlPlane, kubeconfig: Path,
    tmp_path: Path,
) -> None:
    docs = load_example("proxmox.yaml")
    for d in docs:
        d["metadata"]["namespace"] = NS
    spec = tmp_path / "tenant.yaml"
    spec.write_text(yaml.safe_dump_all(docs))
    seed_control_plane(admin, docs, tenant_plane)
    kinds = {(o["apiVersion"], o["kind"]) for o in render_tenant(parse_tenant_documents(docs))
             if o["metadata"].get("namespace") == NS}
    log = tmp_path / "operator.log"
    first = _operator(kubeconfig, log)
    try:
        seed_tenant(admin, docs)
        # Killed once a part of the inventory is written, mid-pass.
        wait_for(lambda: admin.list("cluster.x-k8s.io/v1beta1", "Cluster", NS), 60, 0.02, "the first writes")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
    written = _labelled(admin, kinds)
    assert written and condition(admin.get(*TC, NS, "acme"), "Ready").get("status") != "True", written
    second = _operator(kubeconfig, log)
    try:
        wait_for(lambda: condition(admin.get(*TC, NS, "acme"), "Ready").get("status") == "True", 120, 0.2,
                 "Ready after the restart")
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(30)
    # What is there is exactly what the input renders now: plan (which reads the same observed state
    # the operator does) finds nothing to create, change or prune.
    result = CliRunner().invoke(app, ["plan", "-f", str(spec), "-o", "json",
                                      "--kubeconfig", str(management.admin_kubeconfig_path)])
    assert result.exit_code == 0, result.output
    (tenant,) = json.loads(result.stdout)
    assert len(tenant["changes"]) >= 20
    assert [c for c in tenant["changes"] if c["action"] != "no-op" or c["diff"]] == []
    assert written < _labelled(admin, kinds), "the restart finished what the killed process began"
