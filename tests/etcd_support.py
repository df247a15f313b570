"""A real etcd on loopback as Kamaji runs a DataStore: TLS, client-certificate authentication, auth on,
and per tenant an etcd user (the certificate's CommonName) whose role covers only `/<schema>/`
(Kamaji 26.3.6-edge internal/datastore/etcd.go: RoleGrantPermission(schema, "/<schema>/",
GetPrefixRangeEnd, READWRITE)). etcd and etcdctl come from hack/envtest and hack/etcdctl.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from real_control_plane import REPO, CertificateAuthority, _Process, binaries, free_port
from tenantctl.backup.etcd import EtcdAccess


def etcdctl_bin() -> Path:
    """The etcdctl `make etcdctl` builds (TENANTCTL_ETCDCTL_BIN overrides)."""
    given = os.environ.get("TENANTCTL_ETCDCTL_BIN")
    if given:
        return Path(given) / "etcdctl"
    out = subprocess.run(["bash", str(REPO / "hack" / "etcdctl" / "build.sh")], check=True, capture_output=True,
                         text=True).stdout
    return Path(out.strip().splitlines()[-1]) / "etcdctl"


@dataclass
class SecureEtcd:
    workdir: Path
    ca: CertificateAuthority = field(default_factory=lambda: CertificateAuthority.new("datastore-ca"))
    url: str = ""
    process: _Process | None = None
    etcdctl: Path = field(default_factory=etcdctl_bin)

    def _write(self, name: str, data: bytes) -> Path:
        path = self.workdir / name
        path.write_bytes(data)
        path.chmod(0o600)
        return path

    def client(self, cn: str) -> EtcdAccess:
        """The access of etcd user `cn`: a client certificate whose CommonName is the user, as Kamaji's
        `<tcp>-datastore-certificate` holds it."""
        cert, key = self.ca.issue(cn)
        return EtcdAccess((self.url,), self.workdir / "ca.crt", self._write(f"{cn}.crt", cert),
                          self._write(f"{cn}.key", key), str(self.etcdctl))

    def start(self) -> SecureEtcd:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._write("ca.crt", self.ca.pem)
        cert, key = self.ca.issue("etcd", server=True, hosts=("127.0.0.1", "localhost"))
        client, peer = free_port(), free_port()
        self.url = f"https://127.0.0.1:{client}"
        log = self.workdir / "etcd.log"
        with log.open("wb") as handle:
            popen = subprocess.Popen([
                str(binaries() / "etcd"), "--data-dir", str(self.workdir / "data"), "--name", "default",
                "--listen-client-urls", self.url, "--advertise-client-urls", self.url,
                "--listen-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-advertise-peer-urls", f"http://127.0.0.1:{peer}",
                "--initial-cluster", f"default=http://127.0.0.1:{peer}",
                "--cert-file", str(self._write("server.crt", cert)), "--key-file", str(self._write("server.key", key)),
                "--client-cert-auth", "--trusted-ca-file", str(self.workdir / "ca.crt"),
                "--unsafe-no-fsync", "--log-level", "warn",
            ], stdout=handle, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        self.process = _Process("etcd", popen, log)
        root = self.client("root")
        deadline = time.monotonic() + 30
        while True:
            try:
                root.run("endpoint", "health")
                break
            except Exception:
                if time.monotonic() > deadline or popen.poll() is not None:
                    raise RuntimeError(f"etcd did not start:\n{self.process.tail()}") from None
                time.sleep(0.1)
        root.run("user", "add", "root", "--no-password")
        root.run("user", "grant-role", "root", "root")
        root.run("auth", "enable")
        return self

    @property
    def root(self) -> EtcdAccess:
        return self.client("root")

    def add_tenant(self, schema: str) -> EtcdAccess:
        """The user, role and permission Kamaji creates for a tenant whose schema is `schema`."""
        # Kamaji's GetPrefixRangeEnd, written out here rather than taken from the code under test.
        start, end = f"/{schema}/".encode(), f"/{schema}0".encode()
        root = self.root
        root.run("user", "add", schema, "--no-password")
        root.run("role", "add", schema)
        root.run("role", "grant-permission", schema, "readwrite", start, end)
        root.run("user", "grant-role", schema, schema)
        return self.client(schema)

    def stop(self) -> None:
        if self.process is not None and self.process.popen.poll() is None:
            os.killpg(self.process.popen.pid, 15)
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.popen.wait(5)


@contextlib.contextmanager
def secure_etcd(workdir: Path) -> Iterator[SecureEtcd]:
    etcd = SecureEtcd(workdir)
    try:
        yield etcd.start()
    finally:
        etcd.stop()
