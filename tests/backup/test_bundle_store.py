"""A bundle sealed and kept in a real S3-compatible server (moto's server mode on loopback): nothing of it
readable without the key, whole or refused, and pruned to `keep`."""

from __future__ import annotations

import datetime
import os
from collections.abc import Iterator

import pytest

from s3_support import bucket, s3_server
from tenantctl.backup.bundle import Bundle, BundleError, keys_of, manifest_for, ndjson_of, pack, unpack
from tenantctl.backup.seal import SealError, fingerprint, seal, unseal
from tenantctl.backup.store import BackupStore, StoreError

pytestmark = [pytest.mark.timeout(120)]

KEY = bytes(range(32))
PAIRS = [(b"secrets/default/db", b'k8s\x00{"password":"hunter2-plaintext"}'),
         (b"configmaps/default/c", b"\xff\xfe value")]
PKI = {"demo-ca": {"ca.crt": b"-----BEGIN CERTIFICATE-----\nMIIB", "ca.key": b"-----BEGIN PRIVATE KEY-----\nSECRETKEY"}}


def bundle(revision: int = 42, minute: int = 0) -> Bundle:
    data = ndjson_of(PAIRS)
    now = datetime.datetime(2026, 12, 3, 12, minute, tzinfo=datetime.UTC)
    manifest = manifest_for("tenant-demo", "demo", "etcd", "/tenant_demo_demo/", revision, len(PAIRS), data,
                            pki=list(PKI), now=now)
    return Bundle(manifest, data, PKI, [{"kind": "TenantCluster", "metadata": {"name": "demo"}}])


@pytest.fixture(scope="module")
def endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with s3_server(tmp_path_factory.mktemp("s3")) as url:
        yield url


def test_a_bundle_round_trips_and_says_what_it_holds() -> None:
    original = bundle()
    back = unpack(pack(original))
    assert back.manifest == original.manifest and back.pki == PKI and back.tenant == original.tenant
    assert keys_of(back.data) == PAIRS
    assert back.manifest.sha256 == __import__("hashlib").sha256(back.data).hexdigest()


def test_a_damaged_bundle_is_refused_naming_what_is_wrong() -> None:
    good = bundle()
    with pytest.raises(BundleError, match="SHA-256 differs"):
        unpack(pack(Bundle(good.manifest, good.data + b"\n", good.pki, good.tenant)))
    with pytest.raises(BundleError, match="not a backup bundle"):
        unpack(b"nonsense")
    lying = manifest_for("n", "c", "etcd", "/p/", 1, 3, good.data)
    with pytest.raises(BundleError, match="holds 2 keys, the manifest says 3"):
        unpack(pack(Bundle(lying, good.data)))


def test_sealed_bytes_hold_no_plaintext_and_need_the_key() -> None:
    sealed = seal(KEY, pack(bundle()))
    for secret in (b"hunter2-plaintext", b"SECRETKEY", b"secrets/default/db", b"tenant_demo_demo"):
        assert secret not in sealed
    other = os.urandom(32)
    with pytest.raises(SealError, match=f"sealed with key {fingerprint(KEY)}, not with the given key"):
        unseal(other, sealed)
    with pytest.raises(SealError, match="authentication tag"):
        unseal(KEY, sealed[:-1] + bytes([sealed[-1] ^ 1]))
    with pytest.raises(SealError, match="must be 32"):
        seal(KEY[:16], b"x")
    assert unpack(unseal(KEY, sealed)).manifest == bundle().manifest


def test_the_store_keeps_sealed_objects_lists_them_and_prunes_to_keep(endpoint: str) -> None:
    store = BackupStore(bucket(endpoint, "prune"))
    for minute in range(5):
        b = bundle(revision=100 + minute, minute=minute)
        store.put(b.manifest, seal(KEY, pack(b)))
    listed = store.backups("tenant-demo", "demo")
    assert [s.revision for s in listed] == [100, 101, 102, 103, 104]
    assert listed[0].created == "2026-12-03T12:00:00Z" and listed[0].keys == 2
    assert listed[0].key == "tenants/tenant-demo/demo/20261203T120000Z-r100.tctlbak"
    # What the bucket serves is ciphertext: no secret, no key name, no PKI.
    raw = store.get(listed[0].key)
    assert raw.startswith(b"TCTLBKP1")
    assert b"hunter2" not in raw and b"SECRETKEY" not in raw and b"secrets/default" not in raw
    assert store.prune("tenant-demo", "demo", 2) == [s.key for s in listed[:3]]
    assert [s.revision for s in store.backups("tenant-demo", "demo")] == [103, 104]
    assert store.backups("tenant-demo", "other") == []
    with pytest.raises(StoreError, match="keep is 0"):
        store.prune("tenant-demo", "demo", 0)


def test_a_missing_bucket_is_named(endpoint: str) -> None:
    target = bucket(endpoint, "exists")
    store = BackupStore(type(target)(endpoint, "no-such-bucket", "", "a", "b"))
    with pytest.raises(StoreError, match="s3://no-such-bucket: NoSuchBucket"):
        store.backups("n", "c")


def test_each_seal_draws_a_fresh_nonce() -> None:
    """GCM with a repeated nonce under one key leaks the XOR of two backups and the authentication key."""
    first, second = seal(KEY, b"same backup"), seal(KEY, b"same backup")
    assert first != second and first[16:28] != second[16:28]


def test_the_newest_backup_is_newest_by_time_then_revision_whatever_the_key_text(endpoint: str) -> None:
    """Three kept backups put in another order than taken, two of them in one second (a manual one beside
    the CronJob's): `latest`, the freshness check and the prune all take the newest, and by key text
    `-r10` sorts before `-r9`."""
    from tenantctl.operator.daytwo.backup import choose_backup

    store = BackupStore(bucket(endpoint, "newest"))
    for revision, minute in ((9, 5), (200, 1), (10, 5)):
        b = bundle(revision=revision, minute=minute)
        store.put(b.manifest, seal(KEY, pack(b)))
    listed = store.backups("tenant-demo", "demo")
    assert [(s.created[-9:], s.revision) for s in listed] == [("12:01:00Z", 200), ("12:05:00Z", 9),
                                                               ("12:05:00Z", 10)]
    assert sorted(s.key for s in listed) != [s.key for s in listed], "the key text alone would order them wrong"
    newest = choose_backup(listed, "latest", "tenant-demo/demo")
    assert newest.revision == 10
    by_name = choose_backup(listed, listed[0].key.rsplit("/", 1)[-1], "tenant-demo/demo")
    assert by_name.revision == 200
    assert store.prune("tenant-demo", "demo", 1) == [listed[0].key, listed[1].key]
    assert [s.revision for s in store.backups("tenant-demo", "demo")] == [10]


def test_a_backup_copied_without_its_metadata_keeps_its_place(endpoint: str) -> None:
    """A copy by a tool that drops user metadata: when and which revision are read from its name."""
    import boto3

    target = bucket(endpoint, "bare")
    store = BackupStore(target)
    for revision, minute in ((9, 5), (10, 5)):
        b = bundle(revision=revision, minute=minute)
        store.put(b.manifest, seal(KEY, pack(b)))
    s3 = boto3.client("s3", endpoint_url=target.endpoint, region_name=target.region,
                      aws_access_key_id=target.access_key, aws_secret_access_key=target.secret_key)
    older = bundle(revision=200, minute=1)
    key = f"{target.prefix}tenant-demo/demo/20261203T120100Z-r200.tctlbak"
    s3.put_object(Bucket=target.bucket, Key=key, Body=seal(KEY, pack(older)))  # no Metadata
    listed = store.backups("tenant-demo", "demo")
    assert [(s.created, s.revision) for s in listed] == [
        ("2026-12-03T12:01:00Z", 200), ("2026-12-03T12:05:00Z", 9), ("2026-12-03T12:05:00Z", 10)]
