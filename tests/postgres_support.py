"""A real PostgreSQL on loopback (the server from the `pgserver` wheel), set up as Kamaji sets up a
PostgreSQL DataStore: per tenant a login and a database it owns, kine's table in it, password
authentication over TCP. As root the server runs as `nobody` (PostgreSQL refuses root)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from real_control_plane import free_port
from tenantctl.backup.postgres import PostgresAccess

# kine's PostgreSQL schema (k3s-io/kine pkg/drivers/pgsql): the table every key of a tenant lives in.
KINE_TABLE = """
CREATE TABLE IF NOT EXISTS kine (
  id BIGSERIAL PRIMARY KEY, name text COLLATE "C", created INTEGER, deleted INTEGER,
  create_revision BIGINT, prev_revision BIGINT, lease INTEGER, value bytea, old_value bytea
);
CREATE INDEX IF NOT EXISTS kine_name_index ON kine (name);
"""
ADMIN_PASSWORD = "datastore-root-password"


def pg_bin() -> Path:
    """The wheel's binaries, found without importing the package (its import probes the user's runtime dir)."""
    import importlib.util

    spec = importlib.util.find_spec("pgserver")
    assert spec is not None and spec.submodule_search_locations
    return Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"


def _as_owner() -> dict[str, Any]:
    return {"user": 65534, "group": 65534, "extra_groups": []} if os.geteuid() == 0 else {}


@dataclass
class Postgres:
    workdir: Path
    port: int = 0
    process: subprocess.Popen[bytes] | None = None

    @property
    def admin(self) -> PostgresAccess:
        return PostgresAccess("127.0.0.1", self.port, "postgres", ADMIN_PASSWORD, "postgres", pg_bin())

    def start(self) -> Postgres:
        data, sock = self.workdir / "data", self.workdir / "sock"
        for path in (self.workdir, data, sock):
            path.mkdir(parents=True, exist_ok=True)
            path.chmod(0o755 if path == self.workdir else 0o700)
            if os.geteuid() == 0:
                shutil.chown(path, 65534, 65534)
        pwfile = self.workdir / "pw"
        pwfile.write_text(ADMIN_PASSWORD)
        pwfile.chmod(0o644)
        initdb = subprocess.run([str(pg_bin() / "initdb"), "-D", str(data), "-U", "postgres", "--pwfile", str(pwfile),
                                 "--auth-local=trust", "--auth-host=scram-sha-256", "--encoding=UTF8"],
                                capture_output=True, check=False, **_as_owner())
        if initdb.returncode != 0:
            raise RuntimeError(f"initdb: {initdb.stderr.decode(errors='replace')}")
        self.port = free_port()
        log = (self.workdir / "postgres.log").open("wb")
        self.process = subprocess.Popen(
            [str(pg_bin() / "postgres"), "-D", str(data), "-p", str(self.port), "-k", str(sock),
             "-h", "127.0.0.1", "-c", "fsync=off"],
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True, **_as_owner())
        deadline = time.monotonic() + 30
        while True:
            try:
                self.sql("SELECT 1")
                return self
            except Exception:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise RuntimeError((self.workdir / "postgres.log").read_text()) from None
                time.sleep(0.2)

    def sql(self, statement: str, database: str = "postgres") -> str:
        access = PostgresAccess("127.0.0.1", self.port, "postgres", ADMIN_PASSWORD, database, pg_bin())
        return access.run("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c", statement).decode().strip()

    def add_tenant(self, schema: str, password: str) -> PostgresAccess:
        """What Kamaji runs for a tenant (internal/datastore/postgresql.go), and kine's table."""
        self.sql(f'CREATE ROLE "{schema}" LOGIN PASSWORD \'{password}\'')
        self.sql(f'CREATE DATABASE "{schema}"')
        self.sql(f'GRANT CONNECT, CREATE ON DATABASE "{schema}" TO "{schema}"')
        self.sql(f'ALTER DATABASE "{schema}" OWNER TO "{schema}"')
        return PostgresAccess("127.0.0.1", self.port, schema, password, schema, pg_bin())

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(10)


@contextlib.contextmanager
def postgres() -> Iterator[Postgres]:
    """A server in a directory of its own: pytest's are private to root, and the server runs as nobody."""
    import tempfile

    workdir = Path(tempfile.mkdtemp(prefix="tenantctl-pg-"))
    server = Postgres(workdir)
    try:
        yield server.start()
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)
