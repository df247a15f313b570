"""A real Kubernetes control plane on loopback: etcd, kube-apiserver and kube-controller-manager.

The binaries are the ones `make envtest` builds from Kubernetes' and etcd's own Go modules
(hack/envtest); this starts them the way controller-runtime's envtest does, with no kubelet and no
scheduler: Pods are stored and never run, and a test plays whatever controller it needs by writing
status itself. TLS everywhere the server speaks it, certificates made here with `cryptography`:

- one CA signs the serving certificate, the admin client certificate (`system:masters`) and is the
  cluster's root CA (what the ServiceAccount token controller puts in `ca.crt`);
- an RSA key signs ServiceAccount tokens, so the TokenRequest API mints tokens for any ServiceAccount
  (how a test runs the operator as the ServiceAccount `install` renders, never as admin).

kube-controller-manager runs the garbage collector, namespace lifecycle and the ServiceAccount
controllers: without it owned objects are never collected and a deleted Namespace stays Terminating.
Two API servers can share one etcd under different prefixes (`--etcd-prefix`), as Kamaji does.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import functools
import ipaddress
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

REPO = Path(__file__).resolve().parents[1]
START_TIMEOUT = 60.0
"""Seconds for a component to answer its health check (a cold kube-apiserver takes 5–15 s on 2 cores)."""


def binaries() -> Path:
    """The directory `make envtest` printed: TENANTCTL_ENVTEST_BIN, else the build script's answer."""
    given = os.environ.get("TENANTCTL_ENVTEST_BIN")
    if given:
        return Path(given)
    out = subprocess.run(["bash", str(REPO / "hack" / "envtest" / "build.sh")], check=True, capture_output=True,
                         text=True).stdout
    return Path(out.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pem_key(key: Any) -> bytes:
    return bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                   serialization.NoEncryption()))


def _name(cn: str, org: str | None = None) -> x509.Name:
    attrs = [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    if org:
        attrs.append(x509.NameAttribute(NameOID.ORGANIZATION_NAME, org))
    return x509.Name(attrs)


@dataclass(frozen=True)
class CertificateAuthority:
    key: ec.EllipticCurvePrivateKey
    cert: x509.Certificate

    @classmethod
    def new(cls, cn: str) -> CertificateAuthority:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn))
                .public_key(key.public_key()).serial_number(x509.random_serial_number())
                .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=2))
                .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                             content_commitment=False, key_encipherment=False, data_encipherment=False,
                                             key_agreement=False, encipher_only=False, decipher_only=False),
                               critical=True)
                .sign(key, hashes.SHA256()))
        return cls(key, cert)

    @property
    def pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def issue(self, cn: str, *, org: str | None = None, server: bool = False,
              hosts: tuple[str, ...] = ()) -> tuple[bytes, bytes]:
        """(certificate PEM, key PEM) for a server (`hosts` as SANs) or a client."""
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        usage = x509.oid.ExtendedKeyUsageOID.SERVER_AUTH if server else x509.oid.ExtendedKeyUsageOID.CLIENT_AUTH
        builder = (x509.CertificateBuilder().subject_name(_name(cn, org)).issuer_name(self.cert.subject)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - datetime.timedelta(minutes=5))
                   .not_valid_after(now + datetime.timedelta(days=1))
                   .add_extension(x509.ExtendedKeyUsage([usage]), critical=False))
        if hosts:
            sans: list[x509.GeneralName] = []
            for host in hosts:
                try:
                    sans.append(x509.IPAddress(ipaddress.ip_address(host)))
                except ValueError:
                    sans.append(x509.DNSName(host))
            builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
        cert = builder.sign(self.key, hashes.SHA256())
        return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def kubeconfig(server: str, ca: bytes, *, cert: bytes | None = None, key: bytes | None = None,
               token: str | None = None, name: str = "real") -> dict[str, Any]:
    user: dict[str, Any] = {}
    if cert is not None and key is not None:
        user = {"client-certificate-data": base64.b64encode(cert).decode(),
                "client-key-data": base64.b64encode(key).decode()}
    if token is not None:
        user = {"token": token}
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": name,
        "clusters": [{"name": name, "cluster": {"server": server,
                                                "certificate-authority-data": base64.b64encode(ca).decode()}}],
        "users": [{"name": name, "user": user}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": name}}],
    }


@dataclass
class _Process:
    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""


def spawn(name: str, argv: list[str], workdir: Path, env: Mapping[str, str] | None = None) -> _Process:
    """A process in a session of its own (so its children stop with it), its output in `<workdir>/<name>.log`."""
    log = workdir / f"{name}.log"
    with log.open("wb") as handle:
        popen = subprocess.Popen(argv, stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 env=dict(env) if env is not None else None, start_new_session=True)
    return _Process(name, popen, log)


def stop_processes(processes: Iterable[_Process]) -> None:
    """SIGTERM to each session, then up to 3 s each before SIGKILL."""
    processes = list(processes)
    for process in processes:
        if process.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.popen.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.popen.wait(3)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.popen.pid, signal.SIGKILL)
            process.popen.wait(5)


@dataclass
class ControlPlane:
    """One running control plane; `admin` is a requests session authenticated as system:masters."""

    workdir: Path
    bin_dir: Path
    controller_manager: bool = True
    controllers: tuple[str, ...] = ("garbagecollector", "namespace", "serviceaccount", "serviceaccount-token")
    """The kube-controller-manager controllers to run (Kamaji's stand adds deployment and replicaset)."""
    etcd_url: str | None = None
    """An etcd to share (under `etcd_prefix`); None: start one of its own."""
    etcd_prefix: str = "/registry"
    etcd_tls: tuple[Path, Path, Path] | None = None
    """(CA, client certificate, key) for an etcd that asks for client certificates, as Kamaji's DataStore."""
    extra_args: tuple[str, ...] = ()
    """More kube-apiserver flags (authentication config, audit policy, ...)."""
    ca: CertificateAuthority = field(default_factory=lambda: CertificateAuthority.new("tenantctl-test-ca"))
    server: str = ""
    processes: list[_Process] = field(default_factory=list)
    started: dict[str, float] = field(default_factory=dict)
    """Seconds each component took to answer its health check."""

    # -- files ---------------------------------------------------------------------------------------------

    def _write(self, name: str, data: bytes) -> Path:
        path = self.workdir / name
        path.write_bytes(data)
        path.chmod(0o600)
        return path

    @property
    def admin_kubeconfig(self) -> dict[str, Any]:
        return yaml.safe_load((self.workdir / "admin.kubeconfig").read_text())

    @property
    def admin_kubeconfig_path(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    @property
    def ca_path(self) -> Path:
        return self.workdir / "ca.crt"

    # -- processes -----------------------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str]) -> _Process:
        process = spawn(name, argv, self.workdir)
        self.processes.append(process)
        return process

    def _wait(self, process: _Process, url: str, session: requests.Session | None = None) -> None:
        begun = time.monotonic()
        deadline = begun + START_TIMEOUT
        getter = session or requests.Session()
        last = ""
        while time.monotonic() < deadline:
            if process.popen.poll() is not None:
                raise RuntimeError(f"{process.name} exited with {process.popen.returncode}:\n{process.tail()}")
            try:
                answer = getter.get(url, timeout=2)
                if answer.status_code == 200:
                    self.started[process.name] = time.monotonic() - begun
                    return
                last = f"{answer.status_code} {answer.text[:300]}"
            except requests.RequestException as exc:
                last = str(exc)
            time.sleep(0.1)
        raise RuntimeError(f"{process.name} did not answer {url} within {START_TIMEOUT:g}s ({last}):\n"
                           f"{process.tail()}")

    def start(self) -> ControlPlane:
        self.workdir.mkdir(parents=True, exist_ok=True)
        ca = self.ca
        self._write("ca.crt", ca.pem)
        self._write("ca.key", _pem_key(ca.key))
        hosts = ("127.0.0.1", "localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "10.0.0.1")
        serving, serving_key = ca.issue("kube-apiserver", server=True, hosts=hosts)
        self._write("apiserver.crt", serving)
        self._write("apiserver.key", serving_key)
        admin, admin_key = ca.issue("tenantctl-test-admin", org="system:masters")
        sa_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._write("sa.key", _pem_key(sa_key))
        self._write("sa.pub", sa_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                                serialization.PublicFormat.SubjectPublicKeyInfo))
        if self.etcd_url is None:
            client, peer = free_port(), free_port()
            self.etcd_url = f"http://127.0.0.1:{client}"
            etcd = self._spawn("etcd", [
                str(self.bin_dir / "etcd"), "--data-dir", str(self.workdir / "etcd"), "--name", "default",
                "--listen-client-urls", self.etcd_url, "--advertise-client-urls", self.etcd_url,
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"default=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync", "--log-level", "warn",
            ])
            self._wait(etcd, f"{self.etcd_url}/health")
        port = free_port()
        self.server = f"https://127.0.0.1:{port}"
        apiserver = self._spawn("kube-apiserver", [
            str(self.bin_dir / "kube-apiserver"),
            f"--etcd-servers={self.etcd_url}", f"--etcd-prefix={self.etcd_prefix}",
            *([f"--etcd-cafile={self.etcd_tls[0]}", f"--etcd-certfile={self.etcd_tls[1]}",
               f"--etcd-keyfile={self.etcd_tls[2]}", "--etcd-compaction-interval=0"] if self.etcd_tls else []),
            "--bind-address=127.0.0.1", f"--secure-port={port}", "--advertise-address=127.0.0.1",
            f"--cert-dir={self.workdir / 'certs'}",
            f"--tls-cert-file={self.workdir / 'apiserver.crt'}",
            f"--tls-private-key-file={self.workdir / 'apiserver.key'}",
            f"--client-ca-file={self.ca_path}",
            "--service-cluster-ip-range=10.0.0.0/24", "--allow-privileged=true",
            "--authorization-mode=RBAC",
            "--service-account-issuer=https://kubernetes.default.svc",
            f"--service-account-key-file={self.workdir / 'sa.pub'}",
            f"--service-account-signing-key-file={self.workdir / 'sa.key'}",
            "--disable-admission-plugins=ServiceAccount", "--enable-priority-and-fairness=false",
            "--profiling=false", "--v=0", *self.extra_args,
        ])
        self._write("admin.crt", admin)
        self._write("admin.key", admin_key)
        admin_config = kubeconfig(self.server, ca.pem, cert=admin, key=admin_key)
        self._write("admin.kubeconfig", yaml.safe_dump(admin_config).encode())
        self._wait(apiserver, f"{self.server}/readyz", self.admin)
        if self.controller_manager:
            manager = self._spawn("kube-controller-manager", [
                str(self.bin_dir / "kube-controller-manager"),
                f"--kubeconfig={self.admin_kubeconfig_path}",
                f"--authentication-kubeconfig={self.admin_kubeconfig_path}",
                f"--authorization-kubeconfig={self.admin_kubeconfig_path}",
                f"--controllers={','.join(self.controllers)}",
                f"--service-account-private-key-file={self.workdir / 'sa.key'}",
                f"--root-ca-file={self.ca_path}",
                "--use-service-account-credentials=false", "--leader-elect=false",
                "--bind-address=127.0.0.1", f"--secure-port={free_port()}",
                f"--cert-dir={self.workdir / 'kcm-certs'}",
                "--concurrent-gc-syncs=5", "--v=0",
            ])
            # The manager has no readiness of its own worth waiting for: its first namespace sync is.
            self._wait_for_default_service_account(manager)
        return self

    def _wait_for_default_service_account(self, manager: _Process) -> None:
        begun = time.monotonic()
        url = f"{self.server}/api/v1/namespaces/default/serviceaccounts/default"
        while time.monotonic() < begun + START_TIMEOUT:
            if manager.popen.poll() is not None:
                raise RuntimeError(f"kube-controller-manager exited:\n{manager.tail()}")
            if self.admin.get(url, timeout=2).status_code == 200:
                self.started[manager.name] = time.monotonic() - begun
                return
            time.sleep(0.1)
        raise RuntimeError(f"kube-controller-manager made no default ServiceAccount:\n{manager.tail()}")

    @functools.cached_property
    def admin(self) -> requests.Session:
        session = requests.Session()
        session.verify = str(self.ca_path)
        session.cert = (str(self.workdir / "admin.crt"), str(self.workdir / "admin.key"))
        session.trust_env = False
        return session

    def stop(self) -> None:
        stop_processes(reversed(self.processes))
        self.processes.clear()

    # -- identities ----------------------------------------------------------------------------------------

    def token(self, namespace: str, service_account: str, seconds: int = 3600) -> str:
        """A token for a ServiceAccount from the TokenRequest API, as a projected volume would hold."""
        answer = self.admin.post(
            f"{self.server}/api/v1/namespaces/{namespace}/serviceaccounts/{service_account}/token",
            json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                  "spec": {"expirationSeconds": seconds}}, timeout=10)
        answer.raise_for_status()
        return str(answer.json()["status"]["token"])

    def kubeconfig_for(self, namespace: str, service_account: str) -> dict[str, Any]:
        return kubeconfig(self.server, self.ca.pem, token=self.token(namespace, service_account),
                          name=f"{namespace}-{service_account}")


@contextlib.contextmanager
def running(workdir: Path, **kwargs: Any) -> Iterator[ControlPlane]:
    plane = ControlPlane(workdir, binaries(), **kwargs)
    try:
        yield plane.start()
    finally:
        plane.stop()


def session_for(config: dict[str, Any], directory: Path) -> tuple[str, requests.Session]:
    """(server, session) of a kubeconfig's current context as a client reads it: its CA, its client
    certificate or token (files written to `directory`)."""
    context = next(c["context"] for c in config["contexts"] if c["name"] == config["current-context"])
    cluster = next(c["cluster"] for c in config["clusters"] if c["name"] == context["cluster"])
    user = next(u["user"] for u in config["users"] if u["name"] == context["user"])
    session = requests.Session()
    session.trust_env = False
    ca = directory / "ca.crt"
    ca.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    session.verify = str(ca)
    if "client-certificate-data" in user:
        cert, key = directory / "client.crt", directory / "client.key"
        cert.write_bytes(base64.b64decode(user["client-certificate-data"]))
        key.write_bytes(base64.b64decode(user["client-key-data"]))
        session.cert = (str(cert), str(key))
    if "token" in user:
        session.headers["Authorization"] = f"Bearer {user['token']}"
    return str(cluster["server"]), session
