"""Shared test helpers: the reference material and one real embedded Postgres per session."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", module="platformdirs")

REPO = Path(__file__).resolve().parents[1]
# gbrain's published reference material, copied into the repo (see its PROVENANCE.md).
REFERENCE = REPO / "tests" / "data" / "reference"


def reference_dir() -> Path:
    return REFERENCE


@pytest.fixture(scope="session")
def reference() -> Path:
    return reference_dir()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[object]:
    from brainbench.brain.server import EmbeddedPostgres

    server = EmbeddedPostgres()
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def brain_dbs(pg_server: object) -> Iterator[object]:
    from brainbench.brain.databases import BrainDatabases

    dbs = BrainDatabases(pg_server, "pytest")  # type: ignore[arg-type]
    dbs.prepare()
    try:
        yield dbs
    finally:
        dbs.close()


@pytest.fixture
def brain(brain_dbs: object) -> Iterator[tuple[object, str]]:
    """A fresh brain database: (psycopg connection, URL)."""
    from brainbench.brain.store import connect

    name, url = brain_dbs.create()  # type: ignore[attr-defined]
    conn = connect(url)
    try:
        yield conn, url
    finally:
        conn.close()
        brain_dbs.drop(name)  # type: ignore[attr-defined]
