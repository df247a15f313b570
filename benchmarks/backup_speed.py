"""Backup and restore of a tenant of 10,000 objects: time of each step and the sizes, on real peers.

    .venv/bin/python benchmarks/backup_speed.py [--objects N]

A TLS etcd with a user per tenant (as Kamaji's DataStore), the tenant's keys written as kube-apiserver
stores them (protobuf-framed values of 0.5-4 KiB, a third of them Secrets), a moto S3 server on
loopback. Measures the export at one revision with the tenant's certificate, the bundle (gzip), the
seal, the upload, and the restore's download, unseal and import into a new prefix. Prints a table; the
figures are written down in docs/backup.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from etcd_support import secure_etcd
from s3_support import bucket, s3_server
from tenantctl.backup.bundle import Bundle, keys_of, manifest_for, ndjson_of, pack, unpack
from tenantctl.backup.etcd import export_prefix, import_prefix
from tenantctl.backup.seal import seal, unseal
from tenantctl.backup.store import BackupStore


def objects(count: int, seed: int = 7) -> list[tuple[bytes, bytes]]:
    rng = random.Random(seed)
    kinds = ("configmaps", "secrets", "pods", "services", "serviceaccounts", "events.k8s.io")
    pairs = []
    for i in range(count):
        kind = kinds[i % 3] if i % 3 else "secrets"
        size = rng.randint(512, 4096)
        value = b"k8s\x00\n\x02v1\x12\x06Object\x12" + rng.randbytes(size // 2).hex().encode()[:size]
        pairs.append((f"{kind}/ns-{i % 50}/obj-{i:06d}".encode(), value))
    return sorted(pairs)


def timed(label: str, rows: list[tuple[str, str]], fn, *args):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = fn(*args)
    rows.append((label, f"{time.perf_counter() - started:.2f} s"))
    return result


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10_000)
    args = parser.parse_args()
    key = os.urandom(32)
    pairs = objects(args.objects)
    rows: list[tuple[str, str]] = []
    with tempfile.TemporaryDirectory() as tmp, secure_etcd(Path(tmp) / "etcd") as etcd, \
            s3_server(Path(tmp)) as endpoint:
        source = etcd.add_tenant("ns_bench")
        import_prefix(source, b"/ns_bench/", pairs)
        store = BackupStore(bucket(endpoint, "bench"))
        started = time.perf_counter()
        export = timed("export (etcdctl, pinned revision, pages of 1,000)", rows, export_prefix, source, b"/ns_bench/")
        data = timed("keys as NDJSON", rows, ndjson_of, export.pairs)
        manifest = manifest_for("bench", "t", "etcd", "/ns_bench/", export.revision, len(export.pairs), data,
                                now=datetime.datetime.now(datetime.UTC))
        packed = timed("bundle (tar + gzip -6)", rows, pack, Bundle(manifest, data))
        sealed = timed("seal (AES-256-GCM)", rows, seal, key, packed)
        stored = timed("upload (moto S3 on loopback)", rows, store.put, manifest, sealed)
        backup_total = time.perf_counter() - started
        target = etcd.add_tenant("ns_restored")
        started = time.perf_counter()
        blob = timed("download", rows, store.get, stored.key)
        bundle = timed("unseal + unpack (SHA-256, count)", rows, lambda b: unpack(unseal(key, b)), blob)
        written = timed("import (etcdctl txn, 128 keys each)", rows, import_prefix, target, b"/ns_restored/",
                        keys_of(bundle.data))
        restore_total = time.perf_counter() - started
        assert written == len(pairs) and export.pairs == pairs
    raw = sum(len(k) + len(v) for k, v in pairs)
    print(f"{args.objects} objects, {raw / 2**20:.1f} MiB of keys and values")
    for label, value in rows:
        print(f"  {label:<52} {value:>9}")
    print(f"  {'backup, all steps':<52} {backup_total:>7.2f} s")
    print(f"  {'restore, all steps':<52} {restore_total:>7.2f} s")
    print(f"  sizes: NDJSON {len(data) / 2**20:.1f} MiB, bundle {len(packed) / 2**20:.1f} MiB, "
          f"sealed {len(sealed) / 2**20:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
