"""The kine path against a real PostgreSQL on loopback: dumped with pg_dump by the tenant's own login,
restored with pg_restore into a new tenant's empty database, refused into a non-empty one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from postgres_support import KINE_TABLE, Postgres, postgres
from tenantctl.backup.postgres import PostgresAccess, PostgresError, dump, restore, table_state

pytestmark = [pytest.mark.timeout(120)]


@pytest.fixture(scope="module")
def server() -> Iterator[Postgres]:
    with postgres() as running:
        yield running


def kine(access: PostgresAccess, rows: int) -> None:
    access.run("psql", "-X", "-v", "ON_ERROR_STOP=1", "-c", KINE_TABLE)
    access.run("psql", "-X", "-v", "ON_ERROR_STOP=1", "-c",
               "INSERT INTO kine (name, created, deleted, create_revision, prev_revision, lease, value, old_value) "
               "SELECT '/registry/configmaps/app/c' || g, 1, 0, g, 0, 0, "
               f"decode('6b387300ff' || lpad(to_hex(g), 8, '0'), 'hex'), NULL FROM generate_series(1, {rows}) g")


def rows_of(access: PostgresAccess) -> str:
    return access.run("psql", "-X", "-At", "-c", "SELECT name, encode(value, 'hex') FROM kine ORDER BY id").decode()


def test_dump_and_restore_round_trip_into_a_new_tenant(server: Postgres) -> None:
    source = server.add_tenant("ns_a_a", "pw-a")
    kine(source, 120)
    archive, rows, top = dump(source)
    assert (rows, top) == (120, 120) and archive.startswith(b"PGDMP")
    target = server.add_tenant("ns_b_b", "pw-b")
    assert restore(target, archive) == 120
    assert rows_of(target) == rows_of(source)
    # A kine that already created its (empty) table: the data alone goes in.
    empty = server.add_tenant("ns_c_c", "pw-c")
    empty.run("psql", "-X", "-c", KINE_TABLE)
    assert restore(empty, archive) == 120
    with pytest.raises(PostgresError, match="already holds 120 rows in kine"):
        restore(target, archive)


def test_one_tenant_cannot_dump_another(server: Postgres) -> None:
    victim = server.add_tenant("ns_v_v", "pw-v")
    kine(victim, 3)
    thief = server.add_tenant("ns_t_t", "pw-t")
    intruder = PostgresAccess(thief.host, thief.port, thief.user, thief.password, victim.database, thief.bin_dir)
    with pytest.raises(PostgresError, match="permission denied"):
        dump(intruder)


def test_a_wrong_password_and_no_table_are_said(server: Postgres) -> None:
    tenant = server.add_tenant("ns_w_w", "pw-w")
    wrong = PostgresAccess(tenant.host, tenant.port, tenant.user, "nope", tenant.database, tenant.bin_dir)
    with pytest.raises(PostgresError, match="password authentication failed"):
        table_state(wrong)
    with pytest.raises(PostgresError, match="has no kine table"):
        dump(tenant)
