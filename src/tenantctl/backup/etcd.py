"""One tenant's keys in a shared etcd, read and written with etcdctl and the tenant's own certificate.

Kamaji gives each tenant an etcd user (the certificate's CommonName) whose role covers only the range
`/<schema>/` to `/<schema>0`, so these calls cannot reach another tenant even on a shared DataStore
(Kamaji 26.3.6-edge, internal/datastore/etcd.go). etcdctl is etcd's own client: the gRPC gateway would
serve JSON without a binding, but it drops the client certificate and with it the CommonName user.

The export reads every page at one revision, so writes after it are absent and the keys are one
consistent state; when etcd compacts that revision mid-way, the export starts over at a new one. Keys
bound to a lease (Events, the apiserver's master leases) are left out: they would expire anyway, and
imported without their lease they would never go.
"""

from __future__ import annotations

import base64
import json
import subprocess
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["COMPACTED", "Compacted", "EtcdAccess", "EtcdError", "Export", "export_prefix", "import_prefix",
           "key_count", "prefix_range"]

COMPACTED = "required revision has been compacted"
# etcd's default --max-txn-ops is 128 (compares and puts are each counted against it) and its
# --max-request-bytes 1.5 MiB: a batch stays under both.
_TXN_OPS = 128
_TXN_BYTES = 1024 * 1024


class EtcdError(Exception):
    """etcdctl failed: what it said, without the certificate paths it was given."""


class Compacted(EtcdError):
    """The pinned revision was compacted while the export read it."""


@dataclass(frozen=True)
class EtcdAccess:
    """Where the tenant's etcd answers and the tenant's own client certificate (PEM files)."""

    endpoints: tuple[str, ...]
    ca: Path
    cert: Path
    key: Path
    etcdctl: str = "etcdctl"
    timeout_seconds: int = 60

    def argv(self, *args: str | bytes) -> list[str | bytes]:
        return [self.etcdctl, f"--endpoints={','.join(self.endpoints)}", f"--cacert={self.ca}",
                f"--cert={self.cert}", f"--key={self.key}", f"--command-timeout={self.timeout_seconds}s", *args]

    def run(self, *args: str | bytes, stdin: bytes | None = None) -> bytes:
        try:
            done = subprocess.run(self.argv(*args), input=stdin, capture_output=True,
                                  timeout=self.timeout_seconds + 30, check=False)
        except FileNotFoundError:
            raise EtcdError(f"{self.etcdctl!r} not found: the backup needs etcdctl on PATH") from None
        except subprocess.TimeoutExpired:
            raise EtcdError(f"etcdctl did not answer within {self.timeout_seconds + 30} s "
                            f"({', '.join(self.endpoints)})") from None
        if done.returncode != 0:
            said = done.stderr.decode(errors="replace").strip().splitlines()
            message = said[-1] if said else f"exit code {done.returncode}"
            raise (Compacted if COMPACTED in message else EtcdError)(message)
        return done.stdout


def prefix_range(prefix: bytes) -> tuple[bytes, bytes]:
    """[prefix, end): the keys starting with `prefix`, as etcd's WithPrefix (its last byte plus one)."""
    if not prefix or prefix[-1] == 0xFF:
        raise ValueError(f"not a usable etcd prefix: {prefix!r}")
    return prefix, prefix[:-1] + bytes([prefix[-1] + 1])


@dataclass
class Export:
    """The keys under a prefix at one revision, relative to the prefix, in key order."""

    revision: int
    pairs: list[tuple[bytes, bytes]] = field(default_factory=list)
    leased: int = 0
    """Keys left out because a lease holds them."""
    attempts: int = 1


def _page(access: EtcdAccess, start: bytes, end: bytes, revision: int, limit: int) -> dict[str, Any]:
    pinned = [f"--rev={revision}"] if revision else []
    answer: dict[str, Any] = json.loads(access.run("get", "-w", "json", f"--limit={limit}", *pinned, "--", start, end))
    return answer


def _read(access: EtcdAccess, prefix: bytes, page: int) -> Export:
    start, end = prefix_range(prefix)
    first = _page(access, start, end, 0, 1)
    export = Export(int(first["header"]["revision"]))
    after: bytes | None = None
    while True:
        answer = _page(access, after if after is not None else start, end, export.revision, page + 1)
        kvs = answer.get("kvs") or []
        for kv in kvs:
            key = base64.b64decode(kv["key"])
            if key == after:
                continue
            if int(kv.get("lease") or 0):
                export.leased += 1
            else:
                export.pairs.append((key[len(prefix):], base64.b64decode(kv.get("value") or "")))
            after = key
        if not answer.get("more"):
            return export


def export_prefix(access: EtcdAccess, prefix: bytes, *, page: int = 1000, attempts: int = 5) -> Export:
    """Every key under `prefix` at the revision current when the export began (see the module)."""
    for attempt in range(1, attempts + 1):
        try:
            export = _read(access, prefix, page)
        except Compacted:
            if attempt == attempts:
                raise
            continue
        export.attempts = attempt
        return export
    raise AssertionError("unreachable")


def key_count(access: EtcdAccess, prefix: bytes) -> int:
    start, end = prefix_range(prefix)
    # A range's count is of every key in it, whatever the limit: one key read, not all of them.
    answer = json.loads(access.run("get", "--keys-only", "--limit=1", "-w", "json", "--", start, end))
    return int(answer.get("count") or 0)


def go_quote(raw: bytes) -> bytes:
    """`raw` as a Go double-quoted string literal (what etcdctl's txn reader unquotes)."""
    out = bytearray(b'"')
    for byte in raw:
        if 0x20 <= byte < 0x7F and byte not in b'"\\':
            out.append(byte)
        else:
            out += b"\\x%02x" % byte
    out += b'"'
    return bytes(out)


def _batches(pairs: Sequence[tuple[bytes, bytes]]) -> Iterator[Sequence[tuple[bytes, bytes]]]:
    begun, size = 0, 0
    for index, (key, value) in enumerate(pairs):
        if index > begun and (index - begun >= _TXN_OPS or size + len(key) + len(value) > _TXN_BYTES):
            yield pairs[begun:index]
            begun, size = index, 0
        size += len(key) + len(value)
    if begun < len(pairs):
        yield pairs[begun:]


def import_prefix(access: EtcdAccess, prefix: bytes, pairs: Sequence[tuple[bytes, bytes]]) -> int:
    """Write the keys under `prefix`, refusing a prefix that holds any key: a restore never merges.

    Each batch is one transaction that also requires each of its keys to be absent, so a writer that
    appears mid-way fails the import rather than being overwritten. Returns the keys written.
    """
    present = key_count(access, prefix)
    if present:
        raise EtcdError(f"{prefix.decode(errors='replace')} already holds {present} keys: a restore writes "
                        "only into an empty prefix")
    written = 0
    for batch in _batches(pairs):
        lines = [b'c(%s) = "0"' % go_quote(prefix + key) for key, _ in batch]
        lines += [b""] + [b"put -- %s %s" % (go_quote(prefix + key), go_quote(value)) for key, value in batch]
        said = access.run("txn", stdin=b"\n".join([*lines, b"", b""]) + b"\n")
        if not said.startswith(b"SUCCESS"):
            raise EtcdError(f"a key under {prefix.decode(errors='replace')} appeared during the import "
                            f"({written} of {len(pairs)} keys written)")
        written += len(batch)
    return written
