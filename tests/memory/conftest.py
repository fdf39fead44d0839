"""A reference memory system on a real brain database (the session's embedded Postgres), per test."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.databases import BrainDatabases
from brainbench.corpus.loader import Corpus, LoadedFixture, load_corpus
from brainbench.memory.reference import ReferenceMemory
from brainbench.models import memory as m

TRUST_DATA = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust"


@pytest.fixture(scope="session")
def trust_corpus() -> Corpus:
    return load_corpus(TRUST_DATA / "fixtures", TRUST_DATA / "gold")


@pytest.fixture(scope="session")
def trust_fixture(trust_corpus: Corpus) -> Callable[[str], LoadedFixture]:
    by_id = {i.fixture_id: i for i in trust_corpus.fixtures}
    return by_id.__getitem__


@pytest.fixture()
def brain_conn(brain_dbs: BrainDatabases) -> Iterator[psycopg.Connection]:
    """An empty pooled brain (emptied again afterwards), as a run leases one."""
    with brain_dbs.lease() as brain:
        yield brain.conn


@pytest.fixture()
def memory(brain_conn: psycopg.Connection, tmp_path: Path) -> Iterator[Callable[..., ReferenceMemory]]:
    """``memory(protections=..., connector=...)``: the reference system with one namespace open."""
    made: list[ReferenceMemory] = []

    def make(*, protections: bool = True, connector: bool = False, namespace: str = "bb-test") -> ReferenceMemory:
        ops = ReferenceMemory(brain_conn, tmp_path / "scratch")
        opened = ops.call(m.OpenNamespace(namespace=namespace, protections=protections, connector=connector,
                                          connector_feed="acme-example/test"))
        assert opened.ok
        made.append(ops)
        return ops

    yield make
    for ops in made:
        ops.close()
