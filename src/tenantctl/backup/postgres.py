"""One tenant's kine table in a PostgreSQL DataStore, dumped and restored with PostgreSQL's own tools.

Kamaji gives each tenant a database of its own (`<schema>`), owned by the tenant's login, and kine keeps
every key there in one table, `kine`, whose `id` is the revision (Kamaji 26.3.6-edge
internal/datastore/postgresql.go). `pg_dump` reads it in one snapshot; `pg_restore` writes it back in
one transaction, into a database whose `kine` table is absent or empty, never merging.

The password travels in the environment (PGPASSWORD), never on a command line another process can read.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresAccess", "PostgresError", "dump", "restore", "table_state"]

TABLE = "kine"


class PostgresError(Exception):
    pass


@dataclass(frozen=True)
class PostgresAccess:
    host: str
    port: int
    user: str
    password: str
    database: str
    bin_dir: Path | None = None
    """Where pg_dump, pg_restore and psql are (None: PATH)."""
    ca: Path | None = None
    cert: Path | None = None
    key: Path | None = None
    timeout_seconds: int = 600

    def env(self) -> dict[str, str]:
        env = {**os.environ, "PGHOST": self.host, "PGPORT": str(self.port), "PGUSER": self.user,
               "PGPASSWORD": self.password, "PGDATABASE": self.database, "PGCONNECT_TIMEOUT": "10",
               "PGAPPNAME": "tenantctl-backup"}
        if self.ca is not None:
            env |= {"PGSSLMODE": "verify-ca", "PGSSLROOTCERT": str(self.ca)}
            if self.cert is not None and self.key is not None:
                env |= {"PGSSLCERT": str(self.cert), "PGSSLKEY": str(self.key)}
        return env

    def run(self, tool: str, *args: str, stdin: bytes | None = None) -> bytes:
        program = str(self.bin_dir / tool) if self.bin_dir is not None else tool
        try:
            done = subprocess.run([program, *args], input=stdin, capture_output=True, env=self.env(),
                                  timeout=self.timeout_seconds, check=False)
        except FileNotFoundError:
            raise PostgresError(f"{program!r} not found: a PostgreSQL DataStore's backup needs {tool}") from None
        except subprocess.TimeoutExpired:
            raise PostgresError(f"{tool} did not finish within {self.timeout_seconds} s") from None
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            raise PostgresError(f"{tool}: {said[-1] if said else f'exit code {done.returncode}'}")
        return done.stdout


def table_state(access: PostgresAccess) -> tuple[bool, int, int]:
    """(the kine table exists, its rows, its highest id: kine's revision)."""
    out = access.run("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c",
                     f"SELECT to_regclass('public.{TABLE}') IS NOT NULL").decode().strip()
    if out != "t":
        return False, 0, 0
    counts = access.run("psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-c",
                        f"SELECT count(*), coalesce(max(id), 0) FROM public.{TABLE}").decode().strip()
    rows, top = counts.split("|")
    return True, int(rows), int(top)


def dump(access: PostgresAccess) -> tuple[bytes, int, int]:
    """pg_dump's custom-format archive of the kine table, its rows and highest id at the dump's start."""
    exists, rows, top = table_state(access)
    if not exists:
        raise PostgresError(f"database {access.database!r} has no {TABLE} table: nothing of the tenant to back up")
    archive = access.run("pg_dump", "--format=custom", "--no-owner", "--no-privileges", f"--table=public.{TABLE}")
    return archive, rows, top


def restore(access: PostgresAccess, archive: bytes) -> int:
    """Restore the archive into the database, whose kine table must be absent or empty; the rows it holds after."""
    exists, rows, _ = table_state(access)
    if rows:
        raise PostgresError(f"database {access.database!r} already holds {rows} rows in {TABLE}: a restore "
                            "writes only into an empty one")
    args = ["--no-owner", "--no-privileges", "--single-transaction", "--exit-on-error",
            f"--dbname={access.database}"]
    if exists:
        args.insert(0, "--data-only")
    access.run("pg_restore", *args, stdin=archive)
    return table_state(access)[1]
