"""The runner's watch over each seam's share of the shared brain: time, temp files, clone size.

What a role's own settings cannot guarantee, this does from outside, as the superuser:

* **statement time**: a hook role may ``SET statement_timeout = 0`` (it is the role's to
  set) and catch a cancel in PL/pgSQL, so a backend of a hook role that has run one
  statement, or sat in a transaction, longer than ``statement_s + grace_s`` is terminated;
* **temp files**: ``temp_file_limit`` (superuser-only, set on every hook role) bounds one
  backend; the seam's backends together are bounded here (``pg_ls_tmpdir``, by pid);
* **clone size**: an image-seeded database (its owner role is the image's ``seed`` and hook)
  past ``clone_bytes`` loses its owner's logins and every session on it: the fixture's seed
  fails, or the seam's turns there do, and the disk never fills.

Each act is a breach of that seam in the :class:`ShareLedger`, so the turn or seed that
caused it fails as that seam's own; nothing here touches another seam's backends.
"""

from __future__ import annotations

import contextlib
import threading
from collections import defaultdict
from collections.abc import Callable

import psycopg
from psycopg import sql

from brainbench.brain.shares import ShareLedger
from brainbench.models.share import BrainShare

# One pass: every backend of this run's hook roles that is doing something, with how long.
_BUSY = """
SELECT pid, usename::text, datname::text, state,
       extract(epoch FROM now() - CASE WHEN state = 'active' THEN query_start ELSE state_change END)
FROM pg_stat_activity
WHERE backend_type = 'client backend' AND usename LIKE %s AND state IS NOT NULL AND state <> 'idle'
"""
_TEMP = "SELECT name, size FROM pg_ls_tmpdir()"


def _mib(n: int) -> str:
    return f"{n / (1 << 20):.0f} MiB"


class ShareWatchdog:
    """A thread with one superuser connection that enforces ``share`` on roles named ``prefix…``.

    ``seam_of(role)`` names the seam a role belongs to (None: not a hook's, left alone);
    ``clones()`` lists the image-seeded databases as (database, owner role, seam).
    """

    def __init__(self, admin_url: str, prefix: str, share: BrainShare, ledger: ShareLedger,
                 seam_of: Callable[[str], str | None],
                 clones: Callable[[], list[tuple[str, str, str]]]) -> None:
        self.share = share
        self.ledger = ledger
        self._url = admin_url
        self._pattern = prefix.replace("_", r"\_") + "%"
        self._seam_of = seam_of
        self._clones = clones
        self._stop = threading.Event()
        self.oversized: dict[str, str] = {}  # database → why it was cut off
        self._lock = threading.Lock()
        self._conn: psycopg.Connection | None = None
        self._thread = threading.Thread(target=self._loop, name="brain-share-watchdog", daemon=True)

    def _connect(self) -> psycopg.Connection:
        # Its own statements are bounded too: a stalled server must not hold the lock close() needs.
        return psycopg.connect(self._url, autocommit=True, connect_timeout=15,
                               options="-c statement_timeout=10000 -c lock_timeout=5000")

    def start(self) -> ShareWatchdog:
        self._conn = self._connect()
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.share.poll_s):
            try:
                self.check()
            except psycopg.Error:
                # A server that went away is the runner's own failure to report, on its own
                # connections; the watchdog tries again with a new one.
                with self._lock, contextlib.suppress(psycopg.Error):
                    self._reconnect()

    def _reconnect(self) -> None:
        """A new connection in place of the old (the caller holds the lock: ``over_size`` may be
        using the old one from the runner's thread, and must never meet it closed)."""
        if self._conn is not None:
            with contextlib.suppress(psycopg.Error):
                self._conn.close()
        self._conn = None
        self._conn = self._connect()

    def check(self) -> None:
        """One pass (the thread calls it every ``poll_s``; tests call it directly)."""
        with self._lock:
            conn = self._conn
            if conn is None:
                return
            # Each on its own: a runner role that may not list temp files (a --database-url role
            # without superuser) still has the other checks.
            failed: psycopg.Error | None = None
            for check in (self._time, self._temp, self._sizes):
                try:
                    check(conn)
                except psycopg.errors.InsufficientPrivilege:
                    continue
                except psycopg.Error as exc:
                    failed = failed or exc
            if failed is not None:
                raise failed

    def _end(self, conn: psycopg.Connection, pid: int) -> None:
        conn.execute("SELECT pg_terminate_backend(%s)", (pid,))

    def _time(self, conn: psycopg.Connection) -> None:
        bound = self.share.statement_s + self.share.grace_s
        for pid, role, _db, state, seconds in conn.execute(_BUSY, (self._pattern,)).fetchall():
            seam = self._seam_of(role)
            if seam is None or seconds is None or float(seconds) <= bound:
                continue
            self._end(conn, pid)
            what = "ran one statement" if state == "active" else f"stayed {state}"
            self.ledger.breach(seam, f"a session {what} past {self.share.statement_s:g} s (ended by the runner)")

    def _temp(self, conn: psycopg.Connection) -> None:
        files = conn.execute(_TEMP).fetchall()
        if not files:
            return
        pids: dict[int, str] = {}
        for pid, role, *_ in conn.execute(_BUSY, (self._pattern,)).fetchall():
            seam = self._seam_of(role)
            if seam is not None:
                pids[pid] = seam
        used: dict[str, int] = defaultdict(int)
        holders: dict[str, list[int]] = defaultdict(list)
        for name, size in files:
            # pgsql_tmp<pid>.<n>: the backend that made it (a parallel worker's files carry its leader's pid).
            head = str(name).removeprefix("pgsql_tmp").split(".", 1)[0]
            if not head.isdigit() or int(head) not in pids:
                continue
            seam = pids[int(head)]
            used[seam] += int(size)
            holders[seam].append(int(head))
        for seam, total in used.items():
            if total <= self.share.seam_temp_bytes:
                continue
            for pid in set(holders[seam]):
                self._end(conn, pid)
            self.ledger.breach(seam, f"its sessions' temporary files reached {_mib(total)}, past its "
                                     f"{_mib(self.share.seam_temp_bytes)} (ended by the runner)")

    def _sizes(self, conn: psycopg.Connection) -> None:
        for database, owner, seam in self._clones():
            if database in self.oversized:
                continue
            row = conn.execute("SELECT pg_database_size(%s)", (database,)).fetchone()
            if row is None or row[0] is None or int(row[0]) <= self.share.clone_bytes:
                continue
            self.cut_off(database, owner, seam, int(row[0]))

    def cut_off(self, database: str, owner: str, seam: str, size: int) -> None:
        """No more logins for the clone's owner, and none of its sessions: it stops growing."""
        assert self._conn is not None
        why = f"its database grew to {_mib(size)}, past its {_mib(self.share.clone_bytes)} (cut off by the runner)"
        self.oversized[database] = why
        self._conn.execute(sql.SQL("ALTER ROLE {} NOLOGIN").format(sql.Identifier(owner)))
        self._conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (owner,))
        self.ledger.breach(seam, why)

    def over_size(self, database: str) -> str | None:
        """Why ``database`` is past its share, checked now (a seed's last word, which no poll can
        race), or None.  Only image-seeded databases have a share."""
        with self._lock:
            if database in self.oversized or self._conn is None:
                return self.oversized.get(database)
            for name, owner, seam in self._clones():
                if name != database:
                    continue
                try:
                    row = self._conn.execute("SELECT pg_database_size(%s)", (database,)).fetchone()
                except psycopg.OperationalError:
                    # Its connection was lost (a statement timeout under load, a terminated backend):
                    # the watchdog's own trouble, not the run's; once more on a new one.
                    self._reconnect()
                    assert self._conn is not None
                    row = self._conn.execute("SELECT pg_database_size(%s)", (database,)).fetchone()
                if row is not None and row[0] is not None and int(row[0]) > self.share.clone_bytes:
                    self.cut_off(database, owner, seam, int(row[0]))
        return self.oversized.get(database)

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        if not self._lock.acquire(timeout=15):
            return  # a pass still waits on a server that went away: the daemon thread goes with us
        try:
            if self._conn is not None:
                with contextlib.suppress(psycopg.Error):
                    self._conn.close()
                self._conn = None
        finally:
            self._lock.release()
