"""An operator process killed with SIGKILL in the middle of creating a tenant, then started again, on the
real servers: the new process finishes from what the cluster holds, and the inventory is exactly the
render (nothing missing, nothing twice, nothing stray). The operator runs as `tenantctl operator`, a
child process with the ServiceAccount's kubeconfig, as in its pod.

Where it is killed is made exact by a webhook of the test's that refuses the MachineDeployment's create:
killing it once the first matching write has landed raced with the rest of the pass (1 run in 4 found
everything already written: a flaky test, not a product fault)."""

from __future__ import annotations

import base64
import http.server
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from operator_support import condition
from typer.testing import CliRunner

from real_api import Api, wait_for
from real_control_plane import ControlPlane
from real_seed import OPERATOR_NAMESPACE, OPERATOR_SA, seed_control_plane, seed_tenant
from tenant_support import load_example
from tenantctl.cli import app
from tenantctl.render import render_tenant
from tenantctl.spec import parse_tenant_documents

pytestmark = [pytest.mark.timeout(300), pytest.mark.process]

NS = "crash-tenant"
TC = ("tenantctl.io/v1alpha1", "TenantCluster")
VWC = ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration")


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


class _Holder:
    """A validating webhook of the test's that refuses every MachineDeployment create in `NS`: the operator's
    pass stops at that write, deterministically, and is killed there."""

    def __init__(self, management: ControlPlane, directory: Path) -> None:
        cert, key = management.ca.issue("holder", server=True, hosts=("127.0.0.1",))
        (directory / "holder.crt").write_bytes(cert)
        (directory / "holder.key").write_bytes(key)
        self.refused = 0
        holder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                review = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                holder.refused += 1
                body = json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": {
                    "uid": review["request"]["uid"], "allowed": False,
                    "status": {"code": 403, "message": "held by the test"}}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(directory / "holder.crt", directory / "holder.key")
        self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.registration = {
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "test-holds-machinedeployments"},
            "webhooks": [{
                "name": "hold.machinedeployments.test", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                "failurePolicy": "Fail", "timeoutSeconds": 5,
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": NS}},
                "clientConfig": {"url": f"https://127.0.0.1:{self.server.server_address[1]}/hold",
                                 "caBundle": base64.b64encode(management.ca.pem).decode()},
                "rules": [{"apiGroups": ["cluster.x-k8s.io"], "apiVersions": ["*"], "operations": ["CREATE"],
                           "resources": ["machinedeployments"], "scope": "Namespaced"}],
            }],
        }

    def close(self) -> None:
        self.server.shutdown()


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
    holder = _Holder(management, tmp_path)
    admin.apply(holder.registration)
    first = _operator(kubeconfig, log)
    try:
        seed_tenant(admin, docs)
        # Killed at the MachineDeployment's write: what comes before it in the pass is written, it is not.
        wait_for(lambda: holder.refused >= 1, 60, 0.05, "the operator at the MachineDeployment's write")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)
        admin.delete(*VWC, None, holder.registration["metadata"]["name"])
        holder.close()
    written = _labelled(admin, kinds)
    assert written and ("MachineDeployment", "acme-md0") not in written, written
    assert condition(admin.get(*TC, NS, "acme"), "Ready").get("status") != "True"
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
