"""What one backup holds, and the bytes it is written as (a gzip'd tar, sealed before upload).

- `manifest.json`: what the rest is: the tenant, the driver, the prefix or database it came from, the
  revision it was read at, the number of keys and the SHA-256 of the data, so `verify` proves a bundle
  whole without a DataStore;
- `data`: the keys as NDJSON (`{"k", "v"}`, base64, relative to the prefix, so a restore may rewrite it)
  or, for a PostgreSQL DataStore, `pg_dump`'s custom-format archive;
- `pki.json`: the Kamaji PKI Secrets a tenant needs to come back with its identity (`mode: replace`);
- `tenant.yaml`: the TenantCluster and NodePools as the management cluster held them.

Talos secrets are not in it: a restored tenant's machines are new machines.
"""

from __future__ import annotations

import base64
import datetime
import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import msgspec
import yaml

__all__ = ["SCHEMA", "Bundle", "BundleError", "Manifest", "keys_of", "ndjson_of", "pack", "unpack"]

SCHEMA = 1
_MEMBERS = ("manifest.json", "data", "pki.json", "tenant.yaml")


class BundleError(Exception):
    pass


@dataclass(frozen=True)
class Manifest:
    namespace: str
    name: str
    driver: str
    source: str
    """The etcd prefix (`/<schema>/`) or the PostgreSQL database the data came from."""
    revision: int
    keys: int
    sha256: str
    created: str
    leased: int = 0
    pki: tuple[str, ...] = ()
    schema: int = SCHEMA

    def data(self) -> dict[str, Any]:
        return {**asdict(self), "pki": list(self.pki)}


@dataclass
class Bundle:
    manifest: Manifest
    data: bytes
    pki: dict[str, dict[str, bytes]] = field(default_factory=dict)
    tenant: list[dict[str, Any]] = field(default_factory=list)


def ndjson_of(pairs: Sequence[tuple[bytes, bytes]]) -> bytes:
    b64 = base64.b64encode
    return b"".join(msgspec.json.encode({"k": b64(k).decode(), "v": b64(v).decode()}) + b"\n" for k, v in pairs)


def keys_of(data: bytes) -> list[tuple[bytes, bytes]]:
    out = []
    for number, line in enumerate(data.splitlines(), 1):
        try:
            item = msgspec.json.decode(line)
            out.append((base64.b64decode(item["k"], validate=True), base64.b64decode(item["v"], validate=True)))
        except (msgspec.DecodeError, KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"data line {number} is not a key: {exc}") from None
    return out


def manifest_for(namespace: str, name: str, driver: str, source: str, revision: int, keys: int, data: bytes,
                 *, leased: int = 0, pki: Sequence[str] = (), now: datetime.datetime | None = None) -> Manifest:
    created = (now or datetime.datetime.now(tz=datetime.UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return Manifest(namespace, name, driver, source, revision, keys, hashlib.sha256(data).hexdigest(), created,
                    leased, tuple(sorted(pki)))


def _add(tar: tarfile.TarFile, name: str, content: bytes) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(content), 0o600
    tar.addfile(info, io.BytesIO(content))


def pack(bundle: Bundle) -> bytes:
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        _add(tar, "manifest.json", json.dumps(bundle.manifest.data(), indent=1, sort_keys=True).encode())
        _add(tar, "data", bundle.data)
        pki = {s: {k: base64.b64encode(v).decode() for k, v in d.items()} for s, d in bundle.pki.items()}
        _add(tar, "pki.json", json.dumps(pki, sort_keys=True).encode())
        _add(tar, "tenant.yaml", yaml.safe_dump_all(bundle.tenant, sort_keys=True).encode())
    return gzip.compress(raw.getvalue(), compresslevel=6, mtime=0)


def _manifest(raw: Mapping[str, Any]) -> Manifest:
    if raw.get("schema") != SCHEMA:
        raise BundleError(f"bundle schema {raw.get('schema')!r}: this tenantctl reads schema {SCHEMA}")
    try:
        return Manifest(**{**raw, "pki": tuple(raw.get("pki") or ())})
    except TypeError as exc:
        raise BundleError(f"manifest.json: {exc}") from None


def unpack(blob: bytes) -> Bundle:
    """The bundle, checked whole: every member present, the data's SHA-256 and key count as the manifest says."""
    try:
        with tarfile.open(fileobj=io.BytesIO(gzip.decompress(blob)), mode="r") as tar:
            members: dict[str, bytes] = {}
            for info in tar.getmembers():
                handle = tar.extractfile(info) if info.isfile() else None
                if handle is not None and info.name in _MEMBERS:
                    members[info.name] = handle.read()
    except (OSError, EOFError, tarfile.TarError) as exc:
        raise BundleError(f"not a backup bundle: {exc}") from None
    missing = [m for m in _MEMBERS if m not in members]
    if missing:
        raise BundleError(f"bundle lacks {', '.join(missing)}")
    manifest = _manifest(json.loads(members["manifest.json"]))
    data = members["data"]
    if hashlib.sha256(data).hexdigest() != manifest.sha256:
        raise BundleError("the data's SHA-256 differs from the manifest's")
    if manifest.driver == "etcd" and len(keys_of(data)) != manifest.keys:
        raise BundleError(f"the data holds {len(keys_of(data))} keys, the manifest says {manifest.keys}")
    pki = {s: {k: base64.b64decode(v) for k, v in d.items()} for s, d in json.loads(members["pki.json"]).items()}
    tenant = [d for d in yaml.safe_load_all(members["tenant.yaml"]) if d]
    return Bundle(manifest, data, pki, tenant)
