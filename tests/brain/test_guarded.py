"""The runner's connections to a server an image controls end in bounded time, whatever its superuser does.

A real embedded server stands in for a private brain server; this test is its superuser
and plays the image: it holds a catalog lock (new connections wait in their start-up),
locks a table the runner reads, lifts every timeout with ``ALTER ROLE``, and stops the
runner's backend with SIGSTOP (a server that enforces nothing).  Each time the guarded
connection gives up within its bound, with one line saying why, while an unguarded one
is still waiting.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator

import psycopg
import pytest
from brainbench.brain.guarded import ConnectionGuard, ImageServerError
from brainbench.brain.server import EmbeddedPostgres

GUARD = ConnectionGuard(connect_s=2, lock_s=1, statement_s=4, use_s=6)


@pytest.fixture(scope="module")
def server() -> Iterator[EmbeddedPostgres]:
    pg = EmbeddedPostgres()
    try:
        with psycopg.connect(pg.admin_url, autocommit=True) as conn:
            conn.execute("CREATE TABLE memo (id int)")
            # What an image's superuser may do to the role the runner logs in with: no lift must hold.
            conn.execute("ALTER ROLE postgres SET lock_timeout = 0")
            conn.execute("ALTER ROLE postgres SET statement_timeout = 0")
        yield pg
    finally:
        pg.close()


@contextlib.contextmanager
def holding(url: str, statement: str) -> Iterator[None]:
    """A session of the image's superuser that holds ``statement``'s lock until the block ends."""
    with psycopg.connect(url) as holder:
        holder.execute(statement)
        try:
            yield
        finally:
            holder.rollback()


def unguarded(url: str, sql: str) -> threading.Thread:
    def run() -> None:
        with contextlib.suppress(psycopg.Error), psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_a_catalog_lock_cannot_stall_the_runners_connect(server: EmbeddedPostgres) -> None:
    with holding(server.admin_url, "LOCK TABLE pg_catalog.pg_database IN ACCESS EXCLUSIVE MODE"):
        waiting = unguarded(server.admin_url, "SELECT 1")
        started = time.monotonic()
        with pytest.raises(ImageServerError, match="did not let the runner connect within 2 s"), \
                GUARD.connect(server.admin_url):
            pass
        assert time.monotonic() - started < GUARD.connect_s + 3
        assert waiting.is_alive()  # without the guard the runner would still be waiting
    waiting.join(30)
    assert not waiting.is_alive()


def test_a_held_lock_fails_the_runners_statement_even_after_alter_role(server: EmbeddedPostgres) -> None:
    with holding(server.admin_url, "LOCK TABLE memo IN ACCESS EXCLUSIVE MODE"):
        waiting = unguarded(server.admin_url, "SELECT * FROM memo")
        started = time.monotonic()
        with pytest.raises(ImageServerError, match="held a lock the runner waited for over 1 s"), \
                GUARD.connect(server.admin_url, autocommit=True) as conn:
            conn.execute("SELECT * FROM memo")
        assert time.monotonic() - started < GUARD.lock_s + 3
        assert waiting.is_alive()
    waiting.join(30)


def test_a_long_statement_is_cancelled_by_the_runners_own_timeout(server: EmbeddedPostgres) -> None:
    started = time.monotonic()
    with pytest.raises(ImageServerError, match="kept a statement of the runner running over 4 s"), \
            GUARD.connect(server.admin_url, autocommit=True) as conn:
        conn.execute("SELECT pg_sleep(60)")
    assert time.monotonic() - started < GUARD.statement_s + 3


def test_a_stopped_backend_is_given_up_on_at_the_deadline(server: EmbeddedPostgres) -> None:
    started = time.monotonic()
    backend = 0
    try:
        with pytest.raises(ImageServerError, match="stopped answering: the runner gave up on its connection after 6"), \
                GUARD.connect(server.admin_url, autocommit=True) as conn:
            row = conn.execute("SELECT pg_backend_pid()").fetchone()
            assert row is not None
            backend = int(row[0])
            os.kill(backend, signal.SIGSTOP)  # it enforces no timeout now: only the client side can
            conn.execute("SELECT 1")
        assert GUARD.use_s <= time.monotonic() - started < GUARD.use_s + 4
    finally:
        if backend:
            os.kill(backend, signal.SIGCONT)


def test_a_refused_login_is_one_line(server: EmbeddedPostgres) -> None:
    wrong = server.role_url("postgres", "postgres", "not-the-password")
    with pytest.raises(ImageServerError, match=r"refused the runner's connection: .*password authentication failed"):
        with GUARD.connect(wrong):
            pass
