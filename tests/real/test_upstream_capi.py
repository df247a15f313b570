"""Cluster API core v1.10.1's own webhooks judge tenantctl's renders on the real API server (issue 37).

`make upstream` built the manager from its Go module (hack/upstream/capi); its 13 CRDs and its webhook
configurations come from the same module version, the configurations pointed at the manager on loopback
with a certificate of the test's CA. Each CAPI object of the examples' renders is then applied for real
(not dry-run), so CAPI's defaulting webhooks run: the object as stored must hold every field tenantctl
applied, unchanged, and what the webhooks add is listed here and judged.
"""

from __future__ import annotations

import base64
import copy
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from real_api import Api, crd_documents
from real_control_plane import ControlPlane, free_port
from tenant_support import load_example
from tenantctl.render import render_cluster
from tenantctl.spec import parse_observed, parse_tenant_documents

pytestmark = [pytest.mark.timeout(300)]

REPO = Path(__file__).resolve().parents[2]
NS = "capi-judged"
CAPI_KINDS = ("Cluster", "MachineDeployment", "MachineHealthCheck")

# What CAPI's defaulting webhooks add to tenantctl's objects, and the verdict on each: a field another
# manager sets is one our apply would fight over only if we rendered it too; these we leave to CAPI.
CAPI_DEFAULTS: dict[str, str] = {
    "MachineDeployment spec.minReadySeconds": "0: a machine is available once its node is Ready, as tenantctl "
                                              "wants; rendering CAPI's own default adds nothing",
    "MachineDeployment spec.progressDeadlineSeconds": "600, a field CAPI v1beta1 keeps but no longer reads",
    "MachineDeployment spec.revisionHistoryLimit": "1 old MachineSet kept: CAPI's choice, none of tenantctl's",
    "MachineDeployment spec.replicas": "an autoscaled pool's size: CAPI sets the autoscaler's min-size on "
                                       "create and the cluster-autoscaler owns it after; tenantctl must never "
                                       "render it, or each apply would undo the autoscaler",
    "Cluster spec.controlPlaneEndpoint": "empty (host '', port 0) until Kamaji's provider writes the endpoint; "
                                         "tenantctl must not render it, or it would fight the provider",
}


def _upstream_dir() -> Path:
    done = subprocess.run(["bash", str(REPO / "hack" / "upstream" / "build.sh")], check=True, capture_output=True,
                          text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def _module_dir(component: str, module: str) -> Path:
    done = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", module], cwd=REPO / "hack" / "upstream" / component,
                          check=True, capture_output=True, text=True)
    return Path(done.stdout.strip())


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def capi_webhooks(installed: Any, admin: Api, management: ControlPlane,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    module = _module_dir("capi", "sigs.k8s.io/cluster-api")
    admin.install_crds(crd_documents(sorted((module / "config" / "crd" / "bases").glob("*.yaml"))))
    certs = tmp_path_factory.mktemp("capi-certs")
    cert, key = management.ca.issue("capi-webhook", server=True, hosts=("127.0.0.1",))
    (certs / "tls.crt").write_bytes(cert)
    (certs / "tls.key").write_bytes(key)
    port = free_port()
    log = certs / "manager.log"
    with log.open("wb") as out:
        manager = subprocess.Popen(
            [str(_upstream_dir() / "cluster-api-manager"), "--kubeconfig", str(management.admin_kubeconfig_path),
             "--webhook-port", str(port), "--webhook-cert-dir", str(certs), "--leader-elect=false",
             "--diagnostics-address=0", f"--health-addr=127.0.0.1:{free_port()}",
             # Its controllers act on this test's namespace only: the other tests' objects get no finalizers.
             "--namespace", NS],
            stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    configs = []
    try:
        deadline = time.monotonic() + 60
        while not _listening(port):
            assert manager.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, "CAPI's webhook server did not listen in 60 s"
            time.sleep(0.2)
        bundle = base64.b64encode(management.ca.pem).decode()
        for config in yaml.safe_load_all((module / "config" / "webhook" / "manifests.yaml").read_text()):
            if not config:
                continue
            config = copy.deepcopy(config)
            config["metadata"]["name"] = f"capi-judge-{config['metadata']['name']}"
            for hook in config["webhooks"]:
                path = hook["clientConfig"]["service"]["path"]
                hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
            admin.apply(config, manager="tenantctl-test")
            configs.append((config["apiVersion"], config["kind"], config["metadata"]["name"]))
        admin.namespace(NS)
        yield
    finally:
        for api_version, kind, name in configs:
            admin.delete(api_version, kind, None, name)
        manager.terminate()
        manager.wait(timeout=30)


def _rendered(example: str) -> list[dict[str, Any]]:
    docs = copy.deepcopy(load_example(example))
    for d in docs:
        d["metadata"]["namespace"] = NS
    observed = copy.deepcopy(load_example(f"observed-{example}"))
    for d in observed:
        d["metadata"]["namespace"] = NS
    tenant = parse_tenant_documents(docs)
    cluster = tenant.clusters[0]
    state = parse_observed(observed)[(NS, cluster.metadata.name)]
    return [o for o in render_cluster(cluster, tenant.pools_of(cluster), state) if o["kind"] in CAPI_KINDS]


def _added(applied: Any, stored: Any, path: str, out: list[str], changed: list[str]) -> None:
    """Fields `stored` has beyond `applied` (into `out`), and fields whose value differs (into `changed`)."""
    if isinstance(applied, dict) and isinstance(stored, dict):
        for key, value in stored.items():
            sub = f"{path}.{key}" if path else key
            if key not in applied:
                out.append(sub)
            else:
                _added(applied[key], value, sub, out, changed)
        changed += [f"{path}.{key}" if path else key for key in applied if key not in stored]
    elif applied != stored:
        changed.append(path)


@pytest.mark.parametrize("example", ["proxmox.yaml", "kubevirt.yaml"])
def test_capi_webhooks_admit_every_render_and_change_nothing_tenantctl_wrote(
    capi_webhooks: None, admin: Api, example: str,
) -> None:
    defaults: set[str] = set()
    for obj in _rendered(example):
        stored = admin.apply(obj, manager="tenantctl")
        added: list[str] = []
        changed: list[str] = []
        _added(obj["spec"], stored["spec"], "spec", added, changed)
        assert changed == [], f"{obj['kind']}/{obj['metadata']['name']}: CAPI changed what tenantctl wrote: {changed}"
        defaults |= {f"{obj['kind']} {path}" for path in added}
    unjudged = {d for d in defaults if not any(d == k or d.startswith(k + ".") for k in CAPI_DEFAULTS)}
    assert unjudged == set(), f"CAPI's webhooks default fields nobody has judged: {sorted(unjudged)}"
