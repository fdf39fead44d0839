"""Dropping a run's database as a runner that is no superuser (a ``--database-url`` login).

``DROP DATABASE … WITH (FORCE)`` first checks that its caller may end every process in the
database, and an autovacuum worker belongs to no role such a runner has rights over: CI saw a
clean run leave its template behind ("permission denied to terminate process", exit 2).
``drop_database`` falls back to a plain drop, which stops autovacuum by itself; a session the
runner may not end still keeps the database, and the error says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from brainbench.brain.databases import drop_database
from brainbench.brain.server import EmbeddedPostgres

RUNNER = "bbtest_drop_runner"


@pytest.fixture(scope="module")
def slow_autovacuum_server() -> Iterator[EmbeddedPostgres]:
    """A server whose autovacuum starts within a second and then crawls, so a worker stays in a database."""
    server = EmbeddedPostgres()
    try:
        with psycopg.connect(server.admin_url, autocommit=True) as admin:
            for setting, value in (("autovacuum_naptime", "1"), ("autovacuum_vacuum_cost_delay", "100"),
                                   ("autovacuum_vacuum_cost_limit", "1")):
                admin.execute(f"ALTER SYSTEM SET {setting} = {value}")
            admin.execute("SELECT pg_reload_conf()")
            admin.execute(f"CREATE ROLE {RUNNER} LOGIN CREATEDB CREATEROLE PASSWORD 'pw'")
            admin.execute(f"GRANT CONNECT ON DATABASE postgres TO {RUNNER}")
        yield server
    finally:
        server.close()


def _runner(server: EmbeddedPostgres, database: str = "postgres") -> psycopg.Connection:
    return psycopg.connect(server.role_url(database, RUNNER, "pw"), autocommit=True)


def _database_with_autovacuum_in_it(server: EmbeddedPostgres, name: str) -> None:
    with _runner(server) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    with _runner(server, name) as conn:
        conn.execute("CREATE TABLE big AS SELECT g, repeat('x', 100) AS s FROM generate_series(1, 200000) g")
        conn.execute("DELETE FROM big WHERE g % 2 = 0")
    deadline = time.monotonic() + 60
    with psycopg.connect(server.admin_url, autocommit=True) as admin:
        while time.monotonic() < deadline:
            kinds = [k for k, in admin.execute("SELECT backend_type FROM pg_stat_activity WHERE datname = %s",
                                                (name,))]
            if "autovacuum worker" in kinds:
                return
            time.sleep(0.2)
    raise AssertionError(f"no autovacuum worker came to {name} within 60 s")


def _exists(server: EmbeddedPostgres, name: str) -> bool:
    with psycopg.connect(server.admin_url, autocommit=True) as admin:
        return admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is not None


def test_a_database_autovacuum_is_working_in_is_dropped_by_a_runner_that_is_no_superuser(
        slow_autovacuum_server: EmbeddedPostgres) -> None:
    server = slow_autovacuum_server
    _database_with_autovacuum_in_it(server, "bbtest_drop_av")
    with _runner(server) as conn:
        # The condition CI met: FORCE alone refuses while the worker is there.
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match="terminate process"):
            conn.execute("DROP DATABASE bbtest_drop_av WITH (FORCE)")
        drop_database(conn, "bbtest_drop_av")
    assert not _exists(server, "bbtest_drop_av")


def test_a_session_the_runner_may_not_end_still_keeps_its_database_and_says_why(
        slow_autovacuum_server: EmbeddedPostgres) -> None:
    server = slow_autovacuum_server
    with _runner(server) as conn:
        conn.execute("CREATE DATABASE bbtest_drop_held")
    try:
        with psycopg.connect(server.database_url("bbtest_drop_held"), autocommit=True), _runner(server) as conn:
            with pytest.raises(psycopg.errors.ObjectInUse, match="being accessed by other users"):
                drop_database(conn, "bbtest_drop_held")
        assert _exists(server, "bbtest_drop_held")
    finally:
        with psycopg.connect(server.admin_url, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS bbtest_drop_held WITH (FORCE)")
