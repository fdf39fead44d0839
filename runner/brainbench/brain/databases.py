"""One database per fixture (or continuity pair), cloned from a migrated template.

A database is the isolation unit: a seam connected to one fixture's brain has no
way to name another fixture's tables.  Every database carries the run id in its
name and comment so leftovers of a dead run can be found and dropped.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

import psycopg
from psycopg import sql

from brainbench.brain.budget import ADMIN_CONNECTIONS
from brainbench.brain.server import PostgresServer, pid_alive

PREFIX = "bb_"


def migrations() -> list[tuple[str, str]]:
    files = resources.files("brainbench.brain") / "migrations"
    return sorted((f.name, f.read_text()) for f in files.iterdir() if f.name.endswith(".sql"))


def _label(run_id: str) -> str:
    return json.dumps({"brainbench.run_id": run_id, "pid": os.getpid(), "host": socket.gethostname()})


class BrainDatabases:
    """Creates and drops the run's databases; ``close`` leaves the server as it found it."""

    def __init__(self, server: PostgresServer, run_id: str) -> None:
        self.server = server
        self.run_id = run_id
        self.template = f"{PREFIX}{run_id}_tmpl"
        self._counter = itertools.count(1)
        self._created: list[str] = []
        self._lock = threading.Lock()
        self._file_copy = False
        self._idle: list[Brain] = []
        # The connection budget counts ADMIN_CONNECTIONS: without this, every job of
        # a wide run would open one at once to create its brain.
        self._admin_slots = threading.BoundedSemaphore(ADMIN_CONNECTIONS)

    @contextlib.contextmanager
    def _admin(self, database: str = "postgres") -> Iterator[psycopg.Connection]:
        with self._admin_slots, psycopg.connect(self.server.database_url(database), autocommit=True) as conn:
            yield conn

    def prepare(self) -> None:
        with self._admin() as conn:
            self._file_copy = conn.info.server_version >= 150000
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(self.template)))
            self._remember(self.template)
            conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(self.template), sql.Literal(_label(self.run_id))))
        with self._admin(self.template) as conn:
            for _, text in migrations():
                conn.execute(text)

    def _remember(self, name: str) -> None:
        with self._lock:
            self._created.append(name)

    def create(self) -> tuple[str, str]:
        """A fresh brain; returns (database name, URL)."""
        name = f"{PREFIX}{self.run_id}_{next(self._counter)}"
        # FILE_COPY: for a tiny template a file copy is far cheaper than WAL-logging every block.
        strategy = sql.SQL(" STRATEGY FILE_COPY") if self._file_copy else sql.SQL("")
        with self._admin() as conn:
            conn.execute(sql.SQL("CREATE DATABASE {} TEMPLATE {}{}").format(
                sql.Identifier(name), sql.Identifier(self.template), strategy))
            self._remember(name)
            conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(
                sql.Identifier(name), sql.Literal(_label(self.run_id))))
        return name, self.server.database_url(name)

    @contextlib.contextmanager
    def lease(self) -> Iterator[Brain]:
        """A brain that is empty on entry and emptied on exit.

        Databases are pooled: creating one costs a checkpoint (tens to hundreds of
        milliseconds), emptying one a few DELETEs.  Two leases held at the same time
        are always different databases, so concurrent fixtures never share a brain.
        Each pooled brain keeps one runner-side connection for seeding and scoring.
        """
        with self._lock:
            brain = self._idle.pop() if self._idle else None
        if brain is None:
            name, url = self.create()
            brain = Brain(name, url, psycopg.connect(url, autocommit=True))
        try:
            yield brain
        finally:
            try:
                reset_brain(brain.conn)
            except psycopg.Error:
                brain.conn.close()
                self.drop(brain.name)  # could not be emptied: never hand it out again
            else:
                with self._lock:
                    self._idle.append(brain)

    def drop(self, name: str) -> None:
        with self._admin() as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        with self._lock:
            if name in self._created:
                self._created.remove(name)

    def close(self) -> None:
        with self._lock:
            for brain in self._idle:
                brain.conn.close()
            self._idle.clear()
            names = list(reversed(self._created))
        for name in names:
            self.drop(name)


@dataclass
class Brain:
    """One leased brain database and the runner's connection to it."""

    name: str
    url: str
    conn: psycopg.Connection


def reset_brain(conn: psycopg.Connection) -> None:
    """Empty every table and restart identities, keeping only the ``default`` source (gbrain's resetTables)."""
    # DELETE, not TRUNCATE: on a handful of rows it is ~10x faster, because TRUNCATE
    # swaps every table's files; identities are restarted so fact ids start at 1 again.
    with conn.transaction():
        conn.execute("DELETE FROM page_aliases; DELETE FROM facts; DELETE FROM extract_rollups; DELETE FROM pages;"
                     " DELETE FROM sources WHERE id <> 'default';"
                     " ALTER SEQUENCE pages_id_seq RESTART; ALTER SEQUENCE facts_id_seq RESTART")


def list_brainbench_databases(server: PostgresServer) -> list[tuple[str, dict[str, object]]]:
    with psycopg.connect(server.database_url("postgres"), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT d.datname, shobj_description(d.oid, 'pg_database') FROM pg_database d "
            "WHERE d.datname LIKE %s ORDER BY d.datname",
            (PREFIX + "%",),
        ).fetchall()
    out = []
    for name, comment in rows:
        try:
            label = json.loads(comment or "{}")
        except json.JSONDecodeError:
            continue
        if isinstance(label, dict) and "brainbench.run_id" in label:
            out.append((name, label))
    return out


def sweep_databases(server: PostgresServer, run_id: str | None = None) -> list[str]:
    """Drop databases of ``run_id``, or of every dead run started on this host."""
    dropped = []
    host = socket.gethostname()
    for name, label in list_brainbench_databases(server):
        if run_id is not None:
            doomed = label.get("brainbench.run_id") == run_id
        else:
            pid = label.get("pid")
            doomed = label.get("host") == host and isinstance(pid, int) and not pid_alive(pid)
        if doomed:
            with psycopg.connect(server.database_url("postgres"), autocommit=True) as conn:
                conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            dropped.append(name)
    return dropped
