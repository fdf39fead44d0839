"""One brain database for the write-back tests (on the session's embedded Postgres), emptied per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.databases import BrainDatabases, reset_brain
from brainbench.brain.store import connect
from brainbench.corpus.loader import Corpus, load_corpus


@pytest.fixture(scope="session")
def _brain_conn(brain_dbs: BrainDatabases) -> Iterator[psycopg.Connection]:
    _, url = brain_dbs.create()
    conn = connect(url)
    try:
        yield conn
    finally:
        conn.close()


@pytest.fixture()
def brain(_brain_conn: psycopg.Connection) -> psycopg.Connection:
    """An empty brain: gbrain's resetTables between fixtures (ids restart at 1), cheaper than a new database."""
    _brain_conn.execute("RESET ALL")
    reset_brain(_brain_conn)
    return _brain_conn


@pytest.fixture(scope="session")
def reference_corpus(reference: Path) -> Corpus:
    return load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
