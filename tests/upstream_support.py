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
import os
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
    source: bool = False
    """Built from its tree (hack/upstream/build-sources.sh): the module proxy does not serve it."""
    fixed_port: int | None = None
    """The webhook port the manager hard-codes (it takes no flag for it): one such manager at a time."""


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
    # capmox takes no namespace, no webhook port and no certificate directory: it serves 9443 with the
    # certificates in $TMPDIR/k8s-webhook-server/serving-certs, and acts on every namespace, so it runs
    # against a management control plane of its own (`capmox_management`).
    "capmox": Component("capmox", "github.com/ionos-cloud/cluster-api-provider-proxmox", "capmox-manager", (
        "--kubeconfig={kubeconfig}", "--leader-elect=false", "--health-probe-bind-address=127.0.0.1:{health}",
        "--diagnostics-address=0"), ("ProxmoxCluster", "ProxmoxMachine"), source=True, fixed_port=9443),
}
SOURCE_NAMES = {"capmox": "capmox"}
"""Component → its name in hack/upstream/sources.tsv."""


def sources_dir() -> Path:
    """Where build-sources.sh put the managers built from their trees (built now if missing)."""
    done = subprocess.run(["bash", str(REPO / "hack" / "upstream" / "build-sources.sh")], check=True,
                          capture_output=True, text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def upstream_dir() -> Path:
    """Where `make upstream` put the managers (built now if this machine has none yet)."""
    done = subprocess.run(["bash", str(REPO / "hack" / "upstream" / "build.sh")], check=True, capture_output=True,
                          text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def module_dir(component: Component) -> Path:
    """The component's module as the Go module cache holds it, at the version hack/upstream pins (or, for
    one built from source, its tree as build-sources.sh unpacked it)."""
    if component.source:
        return sources_dir() / "src" / SOURCE_NAMES[component.name]
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
    for config in yaml.safe_load_all((module / "config" / "webhook" / "manifests.yaml").read_text()):
        if not config:
            continue
        config = copy.deepcopy(config)
        config["metadata"]["name"] = f"{component.name}-judge-{config['metadata']['name']}"
        for hook in config["webhooks"]:
            to_loopback(hook, port, ca)
        configs.append(config)
    return configs


def to_loopback(hook: dict[str, Any], port: int, ca: bytes) -> None:
    """Point a webhook at its manager on loopback (the path its Service reference names), trusting `ca`."""
    path = hook["clientConfig"]["service"]["path"]
    hook["clientConfig"] = {"url": f"https://127.0.0.1:{port}{path}", "caBundle": base64.b64encode(ca).decode()}


@contextlib.contextmanager
def running(component: Component, admin: Api, management: ControlPlane, workdir: Path,
            namespace: str) -> Iterator[Path]:
    """The component's manager with its CRDs installed and its webhooks registered; yields its log file.

    A manager with a hard-coded webhook port holds a lock on it for its whole life, so pytest-xdist's
    workers take turns instead of one manager answering another's API server."""
    with contextlib.ExitStack() as stack:
        if component.fixed_port is not None:
            stack.enter_context(_port_lock(component.fixed_port))
        yield from _running(component, admin, management, workdir, namespace)


@contextlib.contextmanager
def _port_lock(port: int) -> Iterator[None]:
    import fcntl

    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"tenantctl-webhook-port-{port}.lock"
    with path.open("w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _running(component: Component, admin: Api, management: ControlPlane, workdir: Path,
             namespace: str) -> Iterator[Path]:
    module = module_dir(component)
    admin.install_crds(crd_documents(sorted((module / "config" / "crd" / "bases").glob("*.yaml"))))
    cert, key = management.ca.issue(f"{component.name}-webhook", server=True, hosts=("127.0.0.1",))
    (workdir / "tls.crt").write_bytes(cert)
    (workdir / "tls.key").write_bytes(key)
    port = component.fixed_port or free_port()
    flags = [f.format(kubeconfig=management.admin_kubeconfig_path, port=port, certs=workdir, health=free_port(),
                      namespace=namespace) for f in component.flags]
    env = dict(os.environ)
    if component.fixed_port is not None:  # controller-runtime's default certificate directory
        certs = workdir / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True, exist_ok=True)
        (certs / "tls.crt").write_bytes(cert)
        (certs / "tls.key").write_bytes(key)
        env["TMPDIR"] = str(workdir)
    log = workdir / "manager.log"
    binary = (sources_dir() if component.source else upstream_dir()) / component.binary
    with log.open("wb") as out:
        manager = subprocess.Popen([str(binary), *flags], stdout=out, env=env,
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


KAMAJI_CONTROL_PLANE = ("controlplane.cluster.x-k8s.io/v1alpha1", "KamajiControlPlane")


def kamaji_reports(admin: Api, namespace: str, name: str, version: str) -> None:
    """What Kamaji's provider writes when every apiserver runs `version` (the fields its CRD requires)."""
    admin.merge_status(*KAMAJI_CONTROL_PLANE, namespace, name, {
        "version": version, "ready": True, "initialized": True, "readyReplicas": 2, "replicas": 2,
        "updatedReplicas": 2, "unavailableReplicas": 0, "selector": f"cluster.x-k8s.io/cluster-name={name}"})


def owner_references(owner: dict[str, Any]) -> list[dict[str, Any]]:
    """The controller reference Cluster API's controllers put on what they own (the tests play them)."""
    return [{"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
             "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}]


def added_and_changed(applied: Any, stored: Any, path: str, out: list[str], changed: list[str]) -> None:
    """Fields `stored` has beyond `applied` (into `out`), and fields whose value differs (into `changed`)."""
    if isinstance(applied, dict) and isinstance(stored, dict):
        for key, value in stored.items():
            sub = f"{path}.{key}" if path else key
            if key not in applied:
                out.append(sub)
            else:
                added_and_changed(applied[key], value, sub, out, changed)
        changed += [f"{path}.{key}" if path else key for key in applied if key not in stored]
    elif applied != stored:
        changed.append(path)


@contextlib.contextmanager
def all_running(names: tuple[str, ...], admin: Api, management: ControlPlane, workdirs: Any,
                namespace: str) -> Iterator[dict[str, Path]]:
    """Several managers, started in this order (a webhook before the controllers whose objects it judges),
    the provider CRDs then labelled with their contract as clusterctl does; yields their logs by name."""
    with contextlib.ExitStack() as stack:
        logs = {name: stack.enter_context(running(COMPONENTS[name], admin, management, workdirs.mktemp(name),
                                                  namespace))
                for name in names}
        label_contracts(admin)
        yield logs


def in_cluster_pool(name: str, namespace: str, addresses: list[str], prefix: int,
                    gateway: str | None) -> dict[str, Any]:
    """An InClusterIPPool as tenantctl renders one, or as capmox v0.7.7 makes one from the ProxmoxCluster's
    ipv4Config/ipv6Config (its fields copied unchanged; no gateway written when none is given)."""
    spec: dict[str, Any] = {"addresses": addresses, "prefix": prefix}
    if gateway is not None:
        spec["gateway"] = gateway
    return {"apiVersion": "ipam.cluster.x-k8s.io/v1alpha2", "kind": "InClusterIPPool",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def capmox_pools(cluster: Any, namespace: str) -> list[dict[str, Any]]:
    """The pools capmox makes for a TenantCluster's ProxmoxCluster, named `<cluster>-v<family>-icip`."""
    return [in_cluster_pool(f"{cluster.metadata.name}-v{v}-icip", namespace, list(c.addresses), c.prefix, c.gateway)
            for v, c in cluster.spec.proxmox.address_configs]
