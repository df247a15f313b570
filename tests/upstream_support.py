"""The upstream managers `make upstream` builds (hack/upstream), run beside the real API server.

Each one runs from its own binary with its webhook server on loopback, registered with the API server
through the webhook configurations of its own module version (pointed at loopback, with a certificate of
the test's CA), and its CRDs installed from the same module. Its controllers act on one namespace only
where the manager can be told so, so other tests' objects never get its finalizers.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import socket
import subprocess
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from real_api import Api, crd_documents
from real_control_plane import ControlPlane, free_port

REPO = Path(__file__).resolve().parents[1]
# The CAPI contract label each provider's own kustomization puts on its CRDs (clusterctl and the
# cluster-api-operator install them that way); the CRD bases in the modules and ../shared lack it, and
# without it Cluster API refuses to follow a reference to the kind.
CONTRACT_LABEL = "cluster.x-k8s.io/v1beta1"
PROVIDER_GROUPS = ("infrastructure.cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io")


@dataclass(frozen=True)
class Component:
    """An upstream manager of `make upstream`: its module, binary, flags, and the kinds its webhooks judge."""

    name: str
    module: str
    binary: str
    flags: tuple[str, ...]
    """With {kubeconfig}, {port}, {certs}, {health} and {namespace} filled in."""
    kinds: tuple[str, ...]


COMPONENTS = {
    "capi": Component("capi", "sigs.k8s.io/cluster-api", "cluster-api-manager", (
        "--kubeconfig={kubeconfig}", "--webhook-port={port}", "--webhook-cert-dir={certs}", "--leader-elect=false",
        "--diagnostics-address=0", "--health-addr=127.0.0.1:{health}", "--namespace={namespace}"),
        ("Cluster", "MachineDeployment", "MachineHealthCheck")),
    # CABPT's manager takes no namespace: its controllers act on TalosConfigs, which only Cluster API
    # creates (from a TalosConfigTemplate), and only in the namespace Cluster API acts on.
    "cabpt": Component("cabpt", "github.com/siderolabs/cluster-api-bootstrap-provider-talos", "cabpt-manager", (
        "--kubeconfig={kubeconfig}", "--webhook-port={port}", "--webhook-cert-dir={certs}",
        "--diagnostics-address=0", "--health-addr=127.0.0.1:{health}"), ("TalosConfigTemplate",)),
    "caip": Component("caip", "sigs.k8s.io/cluster-api-ipam-provider-in-cluster", "caip-manager", (
        "-kubeconfig={kubeconfig}", "-webhook-port={port}", "-webhook-cert-dir={certs}", "-leader-elect=false",
        "-metrics-bind-address=0", "-health-probe-bind-address=127.0.0.1:{health}", "-namespace={namespace}"),
        ("InClusterIPPool",)),
}


def upstream_dir() -> Path:
    """Where `make upstream` put the managers (built now if this machine has none yet)."""
    done = subprocess.run(["bash", str(REPO / "hack" / "upstream" / "build.sh")], check=True, capture_output=True,
                          text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def module_dir(component: Component) -> Path:
    """The component's module as the Go module cache holds it, at the version hack/upstream pins."""
    done = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", component.module],
                          cwd=REPO / "hack" / "upstream" / component.name, check=True, capture_output=True, text=True)
    return Path(done.stdout.strip())


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.2)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def label_contracts(admin: Api) -> None:
    """Put the contract label on every provider CRD, as the providers' own install does."""
    for crd in admin.list("apiextensions.k8s.io/v1", "CustomResourceDefinition"):
        if crd["spec"]["group"] not in PROVIDER_GROUPS:
            continue
        served = "_".join(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
        admin.apply({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                     "metadata": {"name": crd["metadata"]["name"], "labels": {CONTRACT_LABEL: served}}},
                    manager="clusterctl")


def _webhook_configurations(component: Component, module: Path, port: int, ca: bytes) -> list[dict[str, Any]]:
    configs = []
    bundle = base64.b64encode(ca).decode()
    for config in yaml.safe_load_all((module / "config" / "webhook" / "manifests.yaml").read_text()):
        if not config:
            continue
        config = copy.deepcopy(config)
        config["metadata"]["name"] = f"{component.name}-judge-{config['metadata']['name']}"
        for hook in config["webhooks"]:
            path = hook["clientConfig"]["service"]["path"]
            hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": bundle}
        configs.append(config)
    return configs


@contextlib.contextmanager
def running(component: Component, admin: Api, management: ControlPlane, workdir: Path,
            namespace: str) -> Iterator[Path]:
    """The component's manager with its CRDs installed and its webhooks registered; yields its log file."""
    module = module_dir(component)
    admin.install_crds(crd_documents(sorted((module / "config" / "crd" / "bases").glob("*.yaml"))))
    cert, key = management.ca.issue(f"{component.name}-webhook", server=True, hosts=("127.0.0.1",))
    (workdir / "tls.crt").write_bytes(cert)
    (workdir / "tls.key").write_bytes(key)
    port = free_port()
    flags = [f.format(kubeconfig=management.admin_kubeconfig_path, port=port, certs=workdir, health=free_port(),
                      namespace=namespace) for f in component.flags]
    log = workdir / "manager.log"
    with log.open("wb") as out:
        manager = subprocess.Popen([str(upstream_dir() / component.binary), *flags], stdout=out,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    registered: list[Mapping[str, Any]] = []
    try:
        deadline = time.monotonic() + 60
        while not _listening(port):
            assert manager.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"{component.name}'s webhook server did not listen in 60 s"
            time.sleep(0.2)
        for config in _webhook_configurations(component, module, port, management.ca.pem):
            admin.apply(config, manager="tenantctl-test")
            registered.append(config)
        yield log
    finally:
        for config in registered:
            admin.delete(config["apiVersion"], config["kind"], None, config["metadata"]["name"])
        manager.terminate()
        try:
            manager.wait(timeout=30)
        except subprocess.TimeoutExpired:
            manager.kill()
            manager.wait(timeout=10)
