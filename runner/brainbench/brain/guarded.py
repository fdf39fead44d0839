"""The runner's own connections to a Postgres server an image controls, bounded in time.

A private brain server (``executors/docker/private_brain.py``) belongs to one seam, whose
``init``, ``seed`` and hooks log in as its superuser.  A superuser can hold a catalog lock
(a new connection then waits in its start-up, a ``CREATE DATABASE`` behind it), lift any
timeout a role or the server sets, or stop the server's processes: nothing that server
enforces binds it.  So every connection the runner opens there is bounded from both sides:

* ``connect_timeout`` covers the whole start-up, authentication included (psycopg waits on
  it client side);
* ``lock_timeout`` and ``statement_timeout`` travel in the start-up packet (``options``),
  which no ``ALTER ROLE``/``ALTER SYSTEM`` of the image overrides;
* one client-side deadline for the whole use of the connection: past it the socket is shut
  down under psycopg, so even a stopped backend, which enforces nothing, cannot hold the
  runner.

Any failure there is :class:`ImageServerError` (a ``ServerError``) in one line, which the
caller records as that seam's failure: never the run's.
"""

from __future__ import annotations

import contextlib
import math
import os
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import errors

from brainbench.brain.server import ServerError, first_line


class ImageServerError(ServerError):
    """A server an image controls stalled or failed the runner's own work there."""


@dataclass(frozen=True)
class ConnectionGuard:
    """Time bounds of one runner connection to a server an image controls (seconds)."""

    connect_s: float = 15.0
    lock_s: float = 15.0
    # Generous: a CREATE DATABASE there checkpoints a server that runs with fsync on.
    statement_s: float = 60.0
    # The whole use of one connection (every statement of one admin block), client side.
    use_s: float = 90.0

    @contextlib.contextmanager
    def connect(self, url: str, **kwargs: Any) -> Iterator[psycopg.Connection]:
        options = (f"-c lock_timeout={int(self.lock_s * 1000)} -c statement_timeout={int(self.statement_s * 1000)}"
                   f" -c idle_in_transaction_session_timeout={int(self.use_s * 1000)}")
        started = time.monotonic()
        try:
            conn = psycopg.connect(url, connect_timeout=max(1, math.ceil(self.connect_s)), options=options, **kwargs)
        except psycopg.Error as exc:
            if time.monotonic() - started >= self.connect_s * 0.9:
                raise ImageServerError(f"did not let the runner connect within {self.connect_s:g} s") from exc
            raise ImageServerError(f"refused the runner's connection: {first_line(exc)}") from exc
        watchdog = _Watchdog(conn, self.use_s)
        try:
            with conn:
                yield conn
        except psycopg.Error as exc:
            raise ImageServerError(self._why(exc, watchdog.fired.is_set())) from exc
        finally:
            watchdog.cancel()

    def _why(self, exc: psycopg.Error, gave_up: bool) -> str:
        if gave_up:
            return f"stopped answering: the runner gave up on its connection after {self.use_s:g} s"
        if isinstance(exc, errors.LockNotAvailable):
            return f"held a lock the runner waited for over {self.lock_s:g} s ({first_line(exc)})"
        if isinstance(exc, errors.QueryCanceled):
            return f"kept a statement of the runner running over {self.statement_s:g} s ({first_line(exc)})"
        return f"failed the runner's statement: {first_line(exc)}"


class _Watchdog:
    """Shuts the connection's socket down once ``after_s`` have passed, unless cancelled first."""

    def __init__(self, conn: psycopg.Connection, after_s: float) -> None:
        self.conn = conn
        self.fired = threading.Event()
        self._timer = threading.Timer(after_s, self._shut)
        self._timer.daemon = True
        self._timer.start()

    def _shut(self) -> None:
        self.fired.set()
        # shutdown() on a duplicate acts on the one socket libpq reads: its wait returns
        # at once with the connection lost, where closing libpq's own descriptor would not.
        with contextlib.suppress(OSError, psycopg.Error, ValueError):
            duplicate = socket.socket(fileno=os.dup(self.conn.fileno()))
            try:
                duplicate.shutdown(socket.SHUT_RDWR)
            finally:
                duplicate.close()

    def cancel(self) -> None:
        self._timer.cancel()
