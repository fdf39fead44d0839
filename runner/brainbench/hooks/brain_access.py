"""How a seam program finds its brain: environment only (the image contract).

BRAINBENCH_DATABASE_URL  libpq URL of the brain database (required)
BRAINBENCH_SOURCE        active source id (default "default")
BRAINBENCH_BEHAVIOUR     the gbrain release the seam behaves like: 0.60 (default) or 0.46
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TypeVar

import psycopg

from brainbench.hooks.program import BackendUnavailable
from brainbench.models.behaviour import BEHAVIOUR_ENV, Behaviour, seam_behaviour

# Per thread: the warm hook server (hooks/serve.py) answers calls on several
# threads, and a connection must not be closed under another thread's query.
_local = threading.local()
_MAX_CACHED = 8


def _cache() -> dict[str, psycopg.Connection]:
    cache: dict[str, psycopg.Connection] | None = getattr(_local, "connections", None)
    if cache is None:
        cache = _local.connections = {}
    return cache


def active_source(env: Mapping[str, str]) -> str:
    return env.get("BRAINBENCH_SOURCE") or "default"


def behaviour(env: Mapping[str, str]) -> Behaviour:
    return seam_behaviour(env.get(BEHAVIOUR_ENV))


def brain(env: Mapping[str, str]) -> psycopg.Connection:
    """A live connection to the configured brain, reused across calls of a stream process."""
    url = env.get("BRAINBENCH_DATABASE_URL")
    if not url:
        raise BackendUnavailable("BRAINBENCH_DATABASE_URL is not set")
    connections = _cache()
    conn = connections.get(url)
    if conn is not None and not conn.closed:
        return conn
    if len(connections) >= _MAX_CACHED:
        oldest = connections.pop(next(iter(connections)))  # dicts keep insertion order
        oldest.close()
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=5)
    except psycopg.Error as exc:
        raise BackendUnavailable(str(exc).strip().splitlines()[0] if str(exc).strip() else "connect failed") from exc
    connections[url] = conn
    return conn


def close_all() -> None:
    """Close this thread's connections: the warm server holds one only while a call runs,
    as an exec-mode hook process does (brain/budget.py counts exec hooks that way)."""
    connections = _cache()
    while connections:
        _, conn = connections.popitem()
        conn.close()


def forget(env: Mapping[str, str]) -> None:
    conn = _cache().pop(env.get("BRAINBENCH_DATABASE_URL") or "", None)
    if conn is not None:
        conn.close()


T = TypeVar("T")


def with_brain(env: Mapping[str, str], work: Callable[[psycopg.Connection, str], T]) -> T:
    """Run ``work(conn, source)``; a lost connection is retried once, then reported as unavailable."""
    for attempt in (1, 2):
        conn = brain(env)
        try:
            return work(conn, active_source(env))
        except psycopg.OperationalError as exc:
            forget(env)
            if attempt == 2:
                raise BackendUnavailable(str(exc).strip() or "connection lost") from exc
    raise AssertionError("unreachable")
