"""`tenantctl backup run|list|verify|restore`: what each needs from the management cluster, gathered with
exactly the reads the backup Role grants (render/backup.py), then handed to `tenantctl.backup`.

Where the data is: the TenantControlPlane's status (Kamaji writes the driver and the schema there), the
endpoints the tenant's own apiserver Deployment is started with (`--etcd-servers`), and the datastore
certificate Kamaji issued the tenant (`<tcp>-datastore-certificate`: CommonName = its etcd user). The
certificate files live in `workdir` only while a command runs.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import datetime
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tenantctl.backup.bundle import Bundle, keys_of, manifest_for, ndjson_of, pack, unpack
from tenantctl.backup.etcd import EtcdAccess, export_prefix, import_prefix
from tenantctl.backup.postgres import PostgresAccess
from tenantctl.backup.postgres import dump as pg_dump
from tenantctl.backup.postgres import restore as pg_restore
from tenantctl.backup.seal import seal, unseal
from tenantctl.backup.store import BackupStore, S3Target, Stored, StoreError
from tenantctl.operator.kube.client import APIError, KubeClient
from tenantctl.operator.phases.apiserver_flags import APISERVER, running_flags
from tenantctl.problems import InvalidInput, Problem
from tenantctl.render.backup import BACKUP_PKI_SUFFIXES, datastore_certificate, pki_secret
from tenantctl.render.meta import Names
from tenantctl.render.talos_api import TENANT_CONTROL_PLANE_API as TCP_API
from tenantctl.spec import API_VERSION as TC_API
from tenantctl.spec import TenantCluster, parse_tenant_documents
from tenantctl.spec.backup import BackupSpec

__all__ = ["BackupPlan", "Restored", "Tools", "backup_line", "backups_of", "choose_backup", "gather", "last_backup",
           "restore", "run_backup", "verify"]



@dataclass
class BackupPlan:
    """A tenant as a backup sees it: its spec, where its data is, and the keys to keep it."""

    cluster: TenantCluster
    document: dict[str, Any]
    backup: BackupSpec
    target: S3Target
    key: bytes
    driver: str = ""
    schema: str = ""
    endpoints: tuple[str, ...] = ()
    postgres: dict[str, str] = field(default_factory=dict)
    """PostgreSQL only: the tenant's `<tcp>-datastore-config` (DB_CONNECTION_STRING, DB_SCHEMA, DB_USER, ...)."""
    pki: dict[str, dict[str, bytes]] = field(default_factory=dict)

    @property
    def prefix(self) -> bytes:
        return f"/{self.schema}/".encode()


def _refuse(path: str, message: str) -> InvalidInput:
    return InvalidInput([Problem(path, message)])


def _data(secret: Mapping[str, Any] | None) -> dict[str, bytes]:
    return {k: base64.b64decode(v) for k, v in ((secret or {}).get("data") or {}).items()}


async def _secret(api: KubeClient, namespace: str, name: str, keys: Sequence[str], why: str) -> dict[str, bytes]:
    found = await api.get(await api.require("v1", "Secret"), name, namespace, cached=False)
    if found is None:
        raise _refuse(f"Secret/{namespace}/{name}", f"not found ({why})")
    data = _data(found)
    missing = [k for k in keys if not data.get(k)]
    if missing:
        raise _refuse(f"Secret/{namespace}/{name}", f"lacks {', '.join(missing)} ({why})")
    return data


async def _cluster(api: KubeClient, namespace: str, name: str) -> tuple[TenantCluster, dict[str, Any], BackupSpec]:
    doc = await api.get(await api.require(TC_API, "TenantCluster"), name, namespace, cached=False)
    if doc is None:
        raise _refuse(f"TenantCluster/{namespace}/{name}", "not found")
    document = {k: doc[k] for k in ("apiVersion", "kind", "spec")} | {
        "metadata": {"name": name, "namespace": namespace}}
    (cluster,) = parse_tenant_documents([document]).clusters
    if cluster.spec.backup is None:
        raise _refuse(f"TenantCluster/{namespace}/{name}.spec.backup", "not set: the tenant has no backup target")
    return cluster, document, cluster.spec.backup


async def _target(api: KubeClient, namespace: str, backup: BackupSpec) -> tuple[S3Target, bytes]:
    s3 = backup.s3
    creds = await _secret(api, namespace, s3.credentials_secret_name, ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
                          "spec.backup.s3.credentialsSecretName")
    key = (await _secret(api, namespace, backup.encryption.key_secret_name, ("key",),
                         "spec.backup.encryption.keySecretName"))["key"]
    if len(key) != 32:
        raise _refuse(f"Secret/{namespace}/{backup.encryption.key_secret_name}",
                      f"key is {len(key)} bytes; it must be 32 random bytes (AES-256)")
    target = S3Target(s3.endpoint, s3.bucket, s3.prefix, creds["AWS_ACCESS_KEY_ID"].decode(),
                      creds["AWS_SECRET_ACCESS_KEY"].decode(), s3.region)
    return target, key


def _etcd_servers(deployment: Mapping[str, Any]) -> tuple[str, ...]:
    for arg in running_flags(deployment):
        if arg.startswith("--etcd-servers="):
            return tuple(s for s in arg.split("=", 1)[1].split(",") if s)
    return ()


DRIVERS = ("etcd", "PostgreSQL")


async def _storage(api: KubeClient, plan: BackupPlan) -> None:
    names = Names(plan.cluster)
    ns, tcp_name = names.namespace, names.control_plane
    tcp = await api.get(await api.require(TCP_API, "TenantControlPlane"), tcp_name, ns, cached=False)
    storage = ((tcp or {}).get("status") or {}).get("storage") or {}
    plan.driver = str(storage.get("driver") or "")
    plan.schema = str((storage.get("setup") or {}).get("schema") or "")
    if tcp is None or not plan.driver or not plan.schema:
        raise _refuse(f"TenantControlPlane/{ns}/{tcp_name}", "has no status.storage (driver, setup.schema) yet: "
                      "Kamaji has not set up the tenant's datastore")
    if plan.driver not in DRIVERS:
        raise _refuse(f"TenantControlPlane/{ns}/{tcp_name}.status.storage.driver",
                      f"{plan.driver!r}: this release backs up {' and '.join(DRIVERS)} DataStores (docs/backup.md)")
    if plan.driver == "PostgreSQL":
        config = await _secret(api, ns, f"{tcp_name}-datastore-config",
                               ("DB_CONNECTION_STRING", "DB_SCHEMA", "DB_USER", "DB_PASSWORD"),
                               "Kamaji's datastore config of the tenant")
        plan.postgres = {k: v.decode() for k, v in config.items()}
        return
    deployment = await api.get(await api.require("apps/v1", "Deployment"), tcp_name, ns, cached=False)
    plan.endpoints = _etcd_servers(deployment or {})
    if not plan.endpoints:
        raise _refuse(f"Deployment/{ns}/{tcp_name}", f"no {APISERVER} container with --etcd-servers")


async def _pki(api: KubeClient, cluster: TenantCluster) -> dict[str, dict[str, bytes]]:
    names = Names(cluster)
    secrets = await api.require("v1", "Secret")
    out = {}
    for suffix in BACKUP_PKI_SUFFIXES:
        name = pki_secret(names.control_plane, suffix)
        found = await api.get(secrets, name, names.namespace, cached=False)
        if found is None:
            raise _refuse(f"Secret/{names.namespace}/{name}", "not found: Kamaji has not issued the tenant's PKI yet")
        out[suffix] = _data(found)
    return out


async def gather(api: KubeClient, namespace: str, name: str, *, with_storage: bool = True) -> BackupPlan:
    cluster, document, backup = await _cluster(api, namespace, name)
    target, key = await _target(api, namespace, backup)
    plan = BackupPlan(cluster, document, backup, target, key)
    if with_storage:
        await _storage(api, plan)
    return plan


@contextlib.contextmanager
def _certificate_files(data: Mapping[str, bytes], workdir: Path | None) -> Iterator[dict[str, Path]]:
    """The datastore certificate's files, readable by this process only and gone when the block ends."""
    with tempfile.TemporaryDirectory(prefix="tenantctl-backup-", dir=workdir) as tmp:
        paths = {}
        for key in ("ca.crt", "server.crt", "server.key"):
            if data.get(key):
                path = Path(tmp) / key
                path.touch(0o600)
                path.write_bytes(data[key])
                paths[key] = path
        yield paths


async def _access(api: KubeClient, plan: BackupPlan) -> dict[str, bytes]:
    """The datastore certificate Kamaji issued the tenant: an etcd user's must hold all three files; a
    PostgreSQL DataStore's holds them only when the DataStore speaks TLS."""
    names = Names(plan.cluster)
    required = ("ca.crt", "server.crt", "server.key") if plan.driver == "etcd" else ()
    return await _secret(api, names.namespace, datastore_certificate(names.control_plane), required,
                         "Kamaji's datastore certificate of the tenant")


@dataclass(frozen=True)
class Tools:
    """Where the datastores' own clients are (None: PATH)."""

    etcdctl: str = "etcdctl"
    pg_bin: Path | None = None


def _etcd(plan: BackupPlan, files: Mapping[str, Path], tools: Tools) -> EtcdAccess:
    return EtcdAccess(plan.endpoints, files["ca.crt"], files["server.crt"], files["server.key"], tools.etcdctl)


def _postgres(plan: BackupPlan, files: Mapping[str, Path], tools: Tools) -> PostgresAccess:
    host, _, port = plan.postgres["DB_CONNECTION_STRING"].rpartition(":")
    if not host or not port.isdigit():
        raise _refuse(f"Secret/{plan.cluster.metadata.namespace}/{plan.cluster.metadata.name}-datastore-config",
                      f"DB_CONNECTION_STRING {plan.postgres['DB_CONNECTION_STRING']!r} is not host:port")
    return PostgresAccess(host, int(port), plan.postgres["DB_USER"], plan.postgres["DB_PASSWORD"],
                          plan.postgres["DB_SCHEMA"], tools.pg_bin, files.get("ca.crt"), files.get("server.crt"),
                          files.get("server.key"))


async def run_backup(api: KubeClient, namespace: str, name: str, *, tools: Tools = Tools(),
                     workdir: Path | None = None, now: datetime.datetime | None = None) -> tuple[Stored, list[str]]:
    """Export, seal, upload, prune: the stored backup and the pruned object names."""
    plan = await gather(api, namespace, name)
    plan.pki = await _pki(api, plan.cluster)
    certificate = await _access(api, plan)
    with _certificate_files(certificate, workdir) as files:
        if plan.driver == "etcd":
            export = await asyncio.to_thread(export_prefix, _etcd(plan, files, tools), plan.prefix)
            data, source, revision, keys, leased = (ndjson_of(export.pairs), plan.prefix.decode(), export.revision,
                                                    len(export.pairs), export.leased)
        else:
            access = _postgres(plan, files, tools)
            data, keys, revision = await asyncio.to_thread(pg_dump, access)
            source, leased = access.database, 0
    manifest = manifest_for(namespace, name, plan.driver, source, revision, keys, data, leased=leased,
                            pki=list(plan.pki), now=now)
    sealed = seal(plan.key, pack(Bundle(manifest, data, plan.pki, [plan.document])))
    store = BackupStore(plan.target)
    stored = await asyncio.to_thread(store.put, manifest, sealed)
    pruned = await asyncio.to_thread(store.prune, namespace, name, plan.backup.keep)
    return stored, pruned


async def backups_of(api: KubeClient, namespace: str, name: str, source: str | None = None) -> list[Stored]:
    """The backups kept for `source` (`namespace/name`; default: the tenant itself), oldest first."""
    plan = await gather(api, namespace, name, with_storage=False)
    src_ns, _, src_name = (source or f"{namespace}/{name}").partition("/")
    return await asyncio.to_thread(BackupStore(plan.target).backups, src_ns, src_name)


def choose_backup(stored: Sequence[Stored], which: str, source: str) -> Stored:
    """`latest` (the newest of `stored`, which lists oldest first) or the backup named `which`."""
    if not stored:
        raise _refuse("--from", f"no backup of {source} in the bucket")
    if which == "latest":
        return stored[-1]
    found = [s for s in stored if s.key == which or s.key.rsplit("/", 1)[-1] == which]
    if not found:
        raise _refuse("--backup", f"{which!r} is not among the {len(stored)} backups of {source}")
    return found[0]


async def _fetch(plan: BackupPlan, source: str, which: str) -> tuple[Stored, Bundle]:
    """Download `which` of `source`'s backups from the plan's bucket, unseal and unpack it."""
    src_ns, _, src_name = source.partition("/")
    store = BackupStore(plan.target)
    chosen = choose_backup(await asyncio.to_thread(store.backups, src_ns, src_name), which, source)
    blob = await asyncio.to_thread(store.get, chosen.key)
    bundle = unpack(unseal(plan.key, blob))
    held = f"{bundle.manifest.namespace}/{bundle.manifest.name}"
    if held != source:
        # The manifest is inside the sealed data: whoever may write the bucket can move a bundle between
        # tenants' keys, but not change whose it says it is.
        raise _refuse("--from", f"the bundle {chosen.key} holds {held}'s backup, not {source}'s: it was moved in the "
                      "bucket; restore it from its own tenant's backups if that is meant")
    return chosen, bundle


async def verify(api: KubeClient, namespace: str, name: str, source: str | None, which: str) -> tuple[Stored, Bundle]:
    """Download, unseal and unpack: a bundle whose key, SHA-256 or key count is wrong is refused."""
    plan = await gather(api, namespace, name, with_storage=False)
    return await _fetch(plan, source or f"{namespace}/{name}", which)


@dataclass
class Restored:
    stored: Stored
    keys: int
    prefix: str
    pki_written: list[str]


async def _replace_pki(api: KubeClient, cluster: TenantCluster, pki: Mapping[str, Mapping[str, bytes]]) -> list[str]:
    """`mode: replace`: the source's CA, service-account key and front-proxy CA over the ones Kamaji issued
    the new tenant. Kamaji keeps a valid PKI Secret it finds and issues every leaf certificate and
    kubeconfig again from the CA it holds (Kamaji 26.3.6-edge internal/resources, the certificates'
    `mutate`), so tokens and kubeconfigs of the source stay valid."""
    names = Names(cluster)
    secrets = await api.require("v1", "Secret")
    written = []
    for suffix, data in sorted(pki.items()):
        name = pki_secret(names.control_plane, suffix)
        if await api.get(secrets, name, names.namespace, cached=False) is None:
            raise _refuse(f"Secret/{names.namespace}/{name}", "not found: Kamaji has not issued the tenant's PKI yet")
        await api.merge_patch(secrets, name, names.namespace,
                              {"data": {k: base64.b64encode(v).decode() for k, v in data.items()}})
        written.append(name)
    return written


async def _wait_for_storage(api: KubeClient, plan: BackupPlan, timeout: float) -> None:
    """Kamaji sets up the new tenant's datastore user and certificate once its control plane exists (held at
    zero replicas): the restore Job may start before that."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        try:
            await _storage(api, plan)
            await _access(api, plan)
            return
        except InvalidInput:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(2)


async def restore(api: KubeClient, namespace: str, name: str, *, tools: Tools = Tools(),
                  workdir: Path | None = None, wait_seconds: float = 600) -> Restored:
    """Restore as the tenant's spec.restore says (see the CLI's `backup restore`)."""
    plan = await gather(api, namespace, name, with_storage=False)
    spec = plan.cluster.spec.restore
    if spec is None:
        raise _refuse(f"TenantCluster/{namespace}/{name}.spec.restore", "not set: nothing to restore")
    source = f"{spec.from_.namespace or namespace}/{spec.from_.name}"
    if spec.mode == "replace":
        src_ns, _, src_name = source.partition("/")
        live = await api.get(await api.require(TC_API, "TenantCluster"), src_name, src_ns, cached=False)
        if live is not None:
            raise _refuse(f"TenantCluster/{namespace}/{name}.spec.restore.mode",
                          f"replace is refused while TenantCluster {source} exists: two tenants with one identity "
                          "would accept each other's tokens; delete it first, or restore with mode: clone")
    stored, bundle = await _fetch(plan, source, spec.backup)
    await _wait_for_storage(api, plan, wait_seconds)
    if bundle.manifest.driver != plan.driver:
        raise _refuse(f"TenantCluster/{namespace}/{name}.spec.restore",
                      f"the backup is of a {bundle.manifest.driver} DataStore, this tenant's is {plan.driver}: "
                      "a restore goes into a DataStore of the same driver (Kamaji's migrate moves between them)")
    written_pki = await _replace_pki(api, plan.cluster, bundle.pki) if spec.mode == "replace" else []
    certificate = await _access(api, plan)
    with _certificate_files(certificate, workdir) as files:
        if plan.driver == "etcd":
            written = await asyncio.to_thread(import_prefix, _etcd(plan, files, tools), plan.prefix,
                                              keys_of(bundle.data))
            into = plan.prefix.decode()
        else:
            access = _postgres(plan, files, tools)
            written = await asyncio.to_thread(pg_restore, access, bundle.data)
            into = f"database {access.database}"
    return Restored(stored, written, into, written_pki)


async def last_backup(api: KubeClient, cluster: TenantCluster) -> dict[str, Any]:
    """What `plan` and `describe` show of a tenant's backups: the newest (time, size, revision, keys) and
    how many are kept, or why the bucket could not be read; {} without spec.backup."""
    if cluster.spec.backup is None:
        return {}
    try:
        stored = await backups_of(api, cluster.metadata.namespace, cluster.metadata.name)
    except (InvalidInput, StoreError, APIError) as exc:
        return {"error": str(exc)}
    if not stored:
        return {"kept": 0}
    return {"kept": len(stored), "last": stored[-1].data()}


def backup_line(info: Mapping[str, Any]) -> str:
    """One line of `last_backup`'s answer."""
    if "error" in info:
        return f"bucket not read: {info['error']}"
    last = info.get("last")
    if not last:
        return "no backup yet"
    return (f"last {last['created']}, {last['bytes']} bytes sealed, revision {last['revision']}, "
            f"{last['keys']} keys ({info['kept']} kept)")
