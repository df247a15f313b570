"""Kamaji 26.3.6-edge and its Cluster API control-plane provider v0.19.0, run beside the real API server.

Both are built from their trees (hack/upstream/build-sources.sh). Kamaji runs its manager with its
webhooks (registered from its own chart's controller-gen configurations, pointed at loopback), its CRDs
from the same tree, and a DataStore on a real etcd that asks for client certificates with auth on, as
Kamaji's etcd driver needs: it creates each tenant's etcd user and role itself. KWOK plays the kubelets
of two management nodes and kube-scheduler (hack/kwok) places the Pods of the Deployments Kamaji makes,
so they become Running as on a cluster with nodes; kube-controller-manager runs the deployment,
replicaset and nodelifecycle controllers (the last lifts the `not-ready` taint the API server puts on a
new Node).

Kamaji dials a tenant's apiserver at the Service name it put in the admin kubeconfig
(`https://<name>.<namespace>.svc:<port>`). The stand runs that apiserver the way the Pod's kubelet
would: the envtest kube-apiserver with the arguments, Secrets and ConfigMaps of Kamaji's Deployment, on
Kamaji's etcd user. An HTTP CONNECT proxy, given to Kamaji as HTTPS_PROXY, plays the Service network:
it connects `<name>.<namespace>.svc:<port>` to that process and refuses every other name.
"""

from __future__ import annotations

import base64
import contextlib
import copy
import os
import select
import socket
import socketserver
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from cryptography.hazmat.primitives import serialization
from operator_support import b64

from etcd_support import SecureEtcd
from real_api import Api, crd_documents, wait_for
from real_control_plane import REPO, ControlPlane, _Process, binaries, free_port, spawn, stop_processes
from upstream_support import _listening, _port_lock, label_contracts, sources_dir, to_loopback

KAMAJI_NAMESPACE = "kamaji-system"
KAMAJI_PORT = 9443
"""Kamaji's manager hard-codes its webhook port (cmd/manager/cmd.go); capmox's too: they take turns."""
TCP = ("kamaji.clastix.io/v1alpha1", "TenantControlPlane")
MANAGEMENT_CONTROLLERS = ("garbagecollector", "namespace", "serviceaccount", "serviceaccount-token",
                          "deployment", "replicaset", "nodelifecycle")
NODES = ("kwok-node-0", "kwok-node-1")


def kwok_dir() -> Path:
    """Where hack/kwok/build.sh put KWOK, kube-scheduler and KWOK's stage files (built now if missing)."""
    done = subprocess.run(["bash", str(REPO / "hack" / "kwok" / "build.sh")], check=True, capture_output=True,
                          text=True)
    return Path(done.stdout.strip().splitlines()[-1])


def kamaji_tree() -> Path:
    return sources_dir() / "src" / "kamaji"


def provider_tree() -> Path:
    return sources_dir() / "src" / "kamaji-cp"


# -- the Service network: an HTTP CONNECT proxy over a route table ----------------------------------------------

class ServiceNetwork(socketserver.ThreadingTCPServer):
    """Connects `host:port` to the loopback port a route names; any other destination is refused (403)."""

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.routes: dict[str, int] = {}
        self.refused: list[str] = []
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Tunnel(socketserver.StreamRequestHandler):
    server: ServiceNetwork

    def handle(self) -> None:
        request = self.rfile.readline().decode("latin-1").split()
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        target = request[1] if len(request) == 3 and request[0] == "CONNECT" else ""
        port = self.server.routes.get(target)
        if port is None:
            self.server.refused.append(target)
            self.wfile.write(b"HTTP/1.1 403 Forbidden\r\n\r\n")
            return
        try:
            upstream = socket.create_connection(("127.0.0.1", port), timeout=10)
        except OSError:
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        with upstream:
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            sockets = [self.connection, upstream]
            while True:
                ready, _, _ = select.select(sockets, [], [], 60)
                if not ready:
                    return
                for sock in ready:
                    data = sock.recv(65536)
                    if not data:
                        return
                    (upstream if sock is self.connection else self.connection).sendall(data)


# -- the stand ---------------------------------------------------------------------------------------------------

@dataclass
class KamajiStand:
    admin: Api
    management: ControlPlane
    workdir: Path
    etcd: SecureEtcd
    network: ServiceNetwork
    processes: dict[str, _Process] = field(default_factory=dict)
    tenants: dict[tuple[str, str], _Process] = field(default_factory=dict)

    def log(self, name: str) -> str:
        return self.processes[name].log.read_text(errors="replace")

    def tenant_control_plane(self, namespace: str, name: str) -> dict[str, Any] | None:
        return self.admin.get(*TCP, namespace, name)

    def serve_tenant_apiserver(self, namespace: str, name: str) -> int:
        """Run the kube-apiserver container of Kamaji's Deployment `name` as its kubelet would, behind the
        Service name Kamaji dials; returns its loopback port."""
        key = (namespace, name)
        if key in self.tenants:
            stop_processes([self.tenants.pop(key)])
        deployment = self.admin.get("apps/v1", "Deployment", namespace, name)
        assert deployment is not None, f"Kamaji made no Deployment {namespace}/{name}"
        workdir = self.workdir / "pods" / f"{namespace}-{name}"
        argv, port = pod_apiserver(self.admin, deployment, workdir)
        process = spawn("kube-apiserver", argv, workdir)
        self.tenants[key] = process
        tcp = self.tenant_control_plane(namespace, name) or {}
        service_port = int(((tcp.get("spec") or {}).get("networkProfile") or {}).get("port") or 6443)
        deadline = time.monotonic() + 60
        # Ready means its bootstrap RBAC is in place: Kamaji's phases are refused before that.
        while not _ready(port, workdir / "volumes" / "etc-kubernetes-pki" / "ca.crt"):
            assert process.popen.poll() is None, process.tail(40)
            assert time.monotonic() < deadline, f"the tenant apiserver was not ready:\n{process.tail(40)}"
            time.sleep(0.2)
        self.network.routes[f"{name}.{namespace}.svc:{service_port}"] = port
        return port


def _ready(port: int, ca: Path) -> bool:
    """/readyz, which every apiserver lets anyone read (system:public-info-viewer); the certificate is
    checked against Kamaji's CA, not its names (the process listens on loopback, not on the Service)."""
    import ssl

    context = ssl.create_default_context(cafile=str(ca))
    context.check_hostname = False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as raw, \
                context.wrap_socket(raw) as conn:
            conn.sendall(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            return conn.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def pod_apiserver(admin: Api, deployment: Mapping[str, Any], workdir: Path) -> tuple[list[str], int]:
    """The envtest kube-apiserver's argv for the Deployment's `kube-apiserver` container: each volume it
    mounts written out from the Secret, ConfigMap or projection Kamaji named, each mount path in the
    arguments replaced by that directory; the port a free loopback one (the Pod's own is 6443)."""
    spec = deployment["spec"]["template"]["spec"]
    namespace = deployment["metadata"]["namespace"]
    (container,) = [c for c in spec["containers"] if c["name"] == "kube-apiserver"]
    volumes = {v["name"]: v for v in spec.get("volumes") or []}
    mounts: list[tuple[str, Path]] = []
    for mount in container.get("volumeMounts") or []:
        local = workdir / "volumes" / mount["name"]
        _write_volume(admin, namespace, volumes[mount["name"]], local)
        if mount.get("subPath"):
            local = local / mount["subPath"]
        mounts.append((mount["mountPath"], local))
    mounts.sort(key=lambda m: len(m[0]), reverse=True)
    port = free_port()
    argv = [str(binaries() / "kube-apiserver")]
    for arg in [*(container.get("command") or [])[1:], *(container.get("args") or [])]:
        flag, _, value = arg.partition("=")
        for path, local in mounts:
            if value == path or value.startswith(path + "/"):
                value = str(local) + value[len(path):]
                break
        if flag == "--secure-port":
            value = str(port)
        argv.append(f"{flag}={value}" if value or "=" in arg else flag)
    argv += ["--bind-address=127.0.0.1", f"--cert-dir={workdir / 'certs'}"]
    return argv, port


def _write_volume(admin: Api, namespace: str, volume: Mapping[str, Any], directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    sources: list[tuple[str, str, list[dict[str, str]] | None]] = []
    if "secret" in volume:
        sources.append(("Secret", volume["secret"]["secretName"], volume["secret"].get("items")))
    elif "configMap" in volume:
        sources.append(("ConfigMap", volume["configMap"]["name"], volume["configMap"].get("items")))
    elif "projected" in volume:
        for source in volume["projected"]["sources"]:
            kind = "Secret" if "secret" in source else "ConfigMap"
            ref = source.get("secret") or source.get("configMap") or {}
            sources.append((kind, ref["name"], ref.get("items")))
    for kind, name, items in sources:
        obj = admin.get("v1", kind, namespace, name)
        assert obj is not None, f"{kind} {namespace}/{name} that Kamaji's Deployment mounts does not exist"
        data = ({k: base64.b64decode(v) for k, v in (obj.get("data") or {}).items()} if kind == "Secret"
                else {k: v.encode() for k, v in (obj.get("data") or {}).items()})
        for key, path in ([(i["key"], i["path"]) for i in items] if items else [(k, k) for k in data]):
            target = directory / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data[key])
            target.chmod(0o600)


def _datastore(admin: Api, etcd: SecureEtcd) -> None:
    """The DataStore `default`: the etcd's CA with its key (Kamaji issues each tenant's client certificate)
    and root's client certificate. Kamaji reads the key as PKCS#1 or SEC 1 only (internal/crypto:
    ParsePrivateKeyBytes), not PKCS#8."""
    key = etcd.ca.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                    serialization.NoEncryption())
    root = etcd.root
    admin.namespace(KAMAJI_NAMESPACE)
    admin.apply({"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": "etcd-certs", "namespace": KAMAJI_NAMESPACE},
                 "data": {"ca.crt": b64(etcd.ca.pem), "ca.key": b64(key)}}, manager="platform-admin")
    admin.apply({"apiVersion": "v1", "kind": "Secret",
                 "metadata": {"name": "root-client-certs", "namespace": KAMAJI_NAMESPACE},
                 "data": {"tls.crt": b64(root.cert.read_bytes()), "tls.key": b64(root.key.read_bytes())}},
                manager="platform-admin")

    def ref(name: str, key: str) -> dict[str, Any]:
        return {"secretReference": {"name": name, "namespace": KAMAJI_NAMESPACE, "keyPath": key}}

    admin.apply({"apiVersion": "kamaji.clastix.io/v1alpha1", "kind": "DataStore", "metadata": {"name": "default"},
                 "spec": {"driver": "etcd", "endpoints": [etcd.url.removeprefix("https://")],
                          "tlsConfig": {"certificateAuthority": {"certificate": ref("etcd-certs", "ca.crt"),
                                                                 "privateKey": ref("etcd-certs", "ca.key")},
                                        "clientCertificate": {"certificate": ref("root-client-certs", "tls.crt"),
                                                              "privateKey": ref("root-client-certs", "tls.key")}}}},
                manager="platform-admin")


def _webhooks(port: int, ca: bytes) -> list[dict[str, Any]]:
    """Kamaji's chart's webhook configurations (controller-gen's lists), pointed at loopback."""
    out = []
    for kind, source in (("MutatingWebhookConfiguration", "mutating-webhook.yaml"),
                         ("ValidatingWebhookConfiguration", "validating-webhook.yaml")):
        hooks = copy.deepcopy(yaml.safe_load((kamaji_tree() / "charts" / "kamaji" / "controller-gen" / source)
                                             .read_text()))
        for hook in hooks:
            to_loopback(hook, port, ca)
        out.append({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                    "metadata": {"name": f"kamaji-judge-{kind.lower()}"}, "webhooks": hooks})
    return out


def install_crds(admin: Api, shared: Path) -> None:
    """Cluster API's, capmox's and KubeVirt's provider CRDs (../shared), Kamaji's and its provider's (their
    trees), each provider CRD labelled with its contract."""
    admin.install_crds(crd_documents(sorted([
        *(shared / "crds" / "cluster-api-v1.10.1").glob("*.yaml"),
        *(shared / "crds" / "capmox-v0.7.7").glob("*.yaml"),
        *(shared / "crds" / "capk-v0.1.10").glob("*.yaml"),
        *(kamaji_tree() / "charts" / "kamaji" / "crds").glob("*.yaml"),
        *(provider_tree() / "config" / "crd" / "bases").glob("*.yaml"),
    ])))
    label_contracts(admin)


@contextlib.contextmanager
def kamaji_stand(management: ControlPlane, workdir: Path, shared: Path) -> Iterator[KamajiStand]:
    """Everything above, started in order; every process stopped on the way out, whatever happened."""
    admin = Api(management.server, management.admin)
    install_crds(admin, shared)
    tools = kwok_dir()
    env = dict(os.environ, KUBECONFIG=str(management.admin_kubeconfig_path))
    with contextlib.ExitStack() as stack:
        etcd = SecureEtcd(workdir / "datastore")
        stack.callback(etcd.stop)
        etcd.start()
        _datastore(admin, etcd)
        network = ServiceNetwork()
        network.thread.start()
        stack.callback(network.server_close)
        stack.callback(network.shutdown)
        stand = KamajiStand(admin, management, workdir, etcd, network)

        def stop_all() -> None:
            stop_processes([*stand.tenants.values(), *reversed(stand.processes.values())])

        stack.callback(stop_all)
        # KWOK's nodes and the scheduler first: Kamaji's Deployment waits for them.
        stages = sorted((tools / "stages").glob("*.yaml"))
        stand.processes["kwok"] = spawn("kwok", [
            str(tools / "kwok"), f"--kubeconfig={management.admin_kubeconfig_path}",
            "--manage-nodes-with-label-selector=tenantctl.io/kwok=true", "--cidr=10.244.0.0/16",
            "--node-ip=127.0.0.1", f"--server-address=127.0.0.1:{free_port()}",
            *(f"--config={s}" for s in stages)], workdir, dict(env, HOME=str(workdir)))
        kubeconfig = str(management.admin_kubeconfig_path)
        stand.processes["kube-scheduler"] = spawn("kube-scheduler", [
            str(tools / "kube-scheduler"), f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false", "--bind-address=127.0.0.1", f"--secure-port={free_port()}"], workdir)
        for node in NODES:
            admin.create({"apiVersion": "v1", "kind": "Node",
                          "metadata": {"name": node, "labels": {"tenantctl.io/kwok": "true"},
                                       "annotations": {"kwok.x-k8s.io/node": "fake"}},
                          "status": {"allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
                                     "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"}}})
        # Kamaji: its certificates in controller-runtime's default directory under $TMPDIR (no flag for it).
        stack.enter_context(_port_lock(KAMAJI_PORT))
        home = workdir / "kamaji"
        certs = home / "k8s-webhook-server" / "serving-certs"
        certs.mkdir(parents=True)
        cert, key = management.ca.issue("kamaji-webhook", server=True, hosts=("127.0.0.1",))
        (certs / "tls.crt").write_bytes(cert)
        (certs / "tls.key").write_bytes(key)
        (certs / "ca.crt").write_bytes(management.ca.pem)
        stand.processes["kamaji"] = spawn("kamaji", [
            str(sources_dir() / "kamaji-manager"), "manager", "--leader-elect=false", "--datastore=default",
            f"--pod-namespace={KAMAJI_NAMESPACE}", "--serviceaccount-name=kamaji",
            f"--webhook-ca-path={certs / 'ca.crt'}", "--disable-telemetry", "--metrics-bind-address=0",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}", f"--tmp-directory={home / 'tmp'}"],
            workdir, dict(env, TMPDIR=str(home), HTTPS_PROXY=network.url, NO_PROXY="127.0.0.1,localhost"))
        deadline = time.monotonic() + 60
        while not _listening(KAMAJI_PORT):
            assert stand.processes["kamaji"].popen.poll() is None, stand.processes["kamaji"].tail(40)
            assert time.monotonic() < deadline, "Kamaji's webhook server did not listen in 60 s"
            time.sleep(0.2)
        for config in _webhooks(KAMAJI_PORT, management.ca.pem):
            admin.apply(config, manager="kamaji-chart")
            stack.callback(admin.delete, config["apiVersion"], config["kind"], None, config["metadata"]["name"])
        # Its provider: no webhooks, no namespace flag; ExternalClusterReference and friends stay off.
        stand.processes["kamaji-provider"] = spawn("kamaji-provider", [
            str(sources_dir() / "kamaji-cp-manager"), "--metrics-bind-address=0",
            f"--health-probe-bind-address=127.0.0.1:{free_port()}", "--diagnostics-address=0"],
            workdir, dict(env, TMPDIR=str(workdir)))
        wait_for(lambda: all(_node_ready(admin, n) for n in NODES), 60, what="KWOK's nodes Ready and untainted")
        yield stand


def _node_ready(admin: Api, name: str) -> bool:
    node = admin.get("v1", "Node", None, name) or {}
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)
    return ready and not (node.get("spec") or {}).get("taints")


def expose(admin: Api, namespace: str, name: str, address: str) -> None:
    """What a load-balancer implementation (MetalLB, a cloud's) writes for Kamaji's LoadBalancer Service:
    the stand has none, so the test plays it."""
    wait_for(lambda: admin.get("v1", "Service", namespace, name), 60, what=f"Kamaji's Service {namespace}/{name}")
    admin.merge_status("v1", "Service", namespace, name, {"loadBalancer": {"ingress": [{"ip": address}]}})
