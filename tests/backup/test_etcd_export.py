"""The export and import of one tenant's keys against a real etcd set up as Kamaji sets up a shared
DataStore: two tenants on `/ns_a/` and `/ns_ab/`, each user allowed only its own prefix."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from etcd_support import SecureEtcd, secure_etcd
from tenantctl.backup.etcd import Compacted, EtcdAccess, EtcdError, export_prefix, go_quote, import_prefix, key_count

pytestmark = [pytest.mark.timeout(120)]

A, AB = b"/ns_a/", b"/ns_ab/"
# Values as kube-apiserver stores them: protobuf with NULs, newlines, quotes, bytes above 0x7f.
VALUE = b'k8s\x00\n\x02v1\x12\tConfigMap\n"quoted" \\back\xff\xfe-'


@pytest.fixture(scope="module")
def etcd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecureEtcd]:
    with secure_etcd(tmp_path_factory.mktemp("etcd")) as running:
        yield running


@pytest.fixture(scope="module")
def tenants(etcd: SecureEtcd) -> dict[str, EtcdAccess]:
    return {"ns_a": etcd.add_tenant("ns_a"), "ns_ab": etcd.add_tenant("ns_ab")}


def put(access: EtcdAccess, key: bytes, value: bytes) -> None:
    """etcdctl reads the value from stdin when none is given: argv cannot carry a NUL."""
    access.run("put", "--", key, stdin=value)


@pytest.fixture(scope="module")
def seeded(tenants: dict[str, EtcdAccess]) -> dict[bytes, bytes]:
    keys = {b"configmaps/default/c%04d" % i: VALUE + b"%d" % i for i in range(250)}
    for key, value in keys.items():
        put(tenants["ns_a"], A + key, value)
    put(tenants["ns_ab"], AB + b"secrets/default/other", b"the other tenant's")
    return keys


def test_the_scoped_user_reads_only_its_prefix(tenants: dict[str, EtcdAccess], seeded: dict[bytes, bytes]) -> None:
    export = export_prefix(tenants["ns_a"], A, page=64)
    assert dict(export.pairs) == seeded, "every key of ns_a, relative to the prefix, byte for byte"
    assert [k for k, _ in export.pairs] == sorted(seeded)
    with pytest.raises(EtcdError, match="permission denied"):
        export_prefix(tenants["ns_a"], AB)
    assert dict(export_prefix(tenants["ns_ab"], AB).pairs) == {b"secrets/default/other": b"the other tenant's"}


def test_writes_after_the_pinned_revision_are_absent(etcd: SecureEtcd, tenants: dict[str, EtcdAccess],
                                                     seeded: dict[bytes, bytes]) -> None:
    """A page boundary crossed while another client writes: the export is the state at its revision."""
    access = tenants["ns_a"]
    late = A + b"configmaps/default/c0100x"

    class Writer(EtcdAccess):
        pages = 0

        def run(self, *args: str | bytes, stdin: bytes | None = None) -> bytes:
            answer = super().run(*args, stdin=stdin)
            if args[0] == "get":
                Writer.pages += 1
                if Writer.pages == 2:
                    put(access, late, b"written mid-export")
                    put(access, A + b"configmaps/default/c0001", b"changed mid-export")
            return answer

    writer = Writer(access.endpoints, access.ca, access.cert, access.key, access.etcdctl)
    export = export_prefix(writer, A, page=50)
    assert Writer.pages > 3
    assert dict(export.pairs) == seeded
    assert dict(export_prefix(access, A).pairs)[late[len(A):]] == b"written mid-export"
    access.run("del", "--", late)
    put(access, A + b"configmaps/default/c0001", seeded[b"configmaps/default/c0001"])


def test_compaction_makes_the_export_start_over(etcd: SecureEtcd, tenants: dict[str, EtcdAccess],
                                                seeded: dict[bytes, bytes]) -> None:
    access, root = tenants["ns_a"], etcd.root

    class Compacting(EtcdAccess):
        compacted = False

        def run(self, *args: str | bytes, stdin: bytes | None = None) -> bytes:
            if args[0] == "get" and any(str(a).startswith("--rev=") for a in args) and not Compacting.compacted:
                Compacting.compacted = True
                put(access, A + b"configmaps/default/c0002", seeded[b"configmaps/default/c0002"])
                answer = json.loads(root.run("get", "-w", "json", "--", "/ns_a/configmaps/default/c0002"))
                revision = int(answer["header"]["revision"])
                root.run("compaction", str(revision))
            return super().run(*args, stdin=stdin)

    compacting = Compacting(access.endpoints, access.ca, access.cert, access.key, access.etcdctl)
    export = export_prefix(compacting, A, page=100)
    assert Compacting.compacted and export.attempts == 2
    assert dict(export.pairs) == seeded
    Compacting.compacted = False
    with pytest.raises(Compacted):
        export_prefix(compacting, A, attempts=1)


def test_leased_keys_are_left_out(etcd: SecureEtcd, tenants: dict[str, EtcdAccess],
                                  seeded: dict[bytes, bytes]) -> None:
    access = tenants["ns_ab"]
    lease = access.run("lease", "grant", "600").split()[1].decode()
    access.run("put", f"--lease={lease}", "--", AB + b"events/default/e1", stdin=b"an event")
    export = export_prefix(access, AB)
    assert export.leased == 1 and b"events/default/e1" not in dict(export.pairs)


def test_a_round_trip_into_a_new_prefix_is_byte_identical(etcd: SecureEtcd, tenants: dict[str, EtcdAccess],
                                                          seeded: dict[bytes, bytes]) -> None:
    export = export_prefix(tenants["ns_a"], A)
    restored = etcd.add_tenant("ns_restored")
    assert import_prefix(restored, b"/ns_restored/", export.pairs) == len(seeded)
    assert export_prefix(restored, b"/ns_restored/").pairs == export.pairs
    # Never into a prefix that holds anything, and never outside the user's own range.
    with pytest.raises(EtcdError, match="already holds 250 keys"):
        import_prefix(restored, b"/ns_restored/", export.pairs)
    with pytest.raises(EtcdError, match="permission denied"):
        import_prefix(restored, A + b"x/", export.pairs[:1])


def test_a_key_written_during_the_import_fails_it(etcd: SecureEtcd) -> None:
    access = etcd.add_tenant("ns_race")
    pairs = [(b"k%04d" % i, b"v") for i in range(300)]

    class Racing(EtcdAccess):
        def run(self, *args: str | bytes, stdin: bytes | None = None) -> bytes:
            if args[0] == "txn":
                put(access, b"/ns_race/k0200", b"someone else")
            return super().run(*args, stdin=stdin)

    with pytest.raises(EtcdError, match="appeared during the import"):
        import_prefix(Racing(access.endpoints, access.ca, access.cert, access.key, access.etcdctl), b"/ns_race/", pairs)
    assert key_count(access, b"/ns_race/") < len(pairs) + 1


def test_go_quote_round_trips_every_byte() -> None:
    raw = bytes(range(256))
    quoted = go_quote(raw)
    assert quoted.startswith(b'"') and b"\n" not in quoted and b"\x00" not in quoted
    import ast

    assert ast.literal_eval("b" + quoted.decode()) == raw


def test_an_etcdctl_missing_is_said(tmp_path: Path) -> None:
    access = EtcdAccess(("https://127.0.0.1:1",), tmp_path, tmp_path, tmp_path, str(tmp_path / "no-etcdctl"))
    with pytest.raises(EtcdError, match="needs etcdctl on PATH"):
        key_count(access, A)
