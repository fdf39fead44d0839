"""Small corpora copied from gbrain's reference fixtures, and a seeded brain to crash-test."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from brainbench.brain.databases import BrainDatabases
from brainbench.brain.seeding import seed_fixture
from brainbench.brain.server import EmbeddedPostgres
from brainbench.models.corpus import Fixture


def copy_reference_corpus(reference: Path, root: Path, ids: tuple[str, ...]) -> tuple[Path, Path]:
    """``root/fixtures`` and ``root/gold`` holding the named reference fixtures."""
    fx, gd = root / "fixtures", root / "gold"
    fx.mkdir(parents=True)
    gd.mkdir(parents=True)
    for fid in ids:
        source = reference / "corpus" / "fixtures" / f"{fid}.fixture.json"
        shutil.copy(source, fx)
        shutil.copy(reference / "corpus" / "gold" / f"{fid}.gold.json", gd)
    return fx, gd


@contextmanager
def private_seeded_brain(reference: Path, fixture_id: str, run_id: str) -> Iterator[tuple[EmbeddedPostgres, str,
                                                                                          Fixture]]:
    """A private embedded server (the caller may stop and start it) with one fixture seeded."""
    path = reference / "corpus" / "fixtures" / f"{fixture_id}.fixture.json"
    fixture = Fixture.model_validate(json.loads(path.read_text()))
    pg = EmbeddedPostgres()
    try:
        dbs = BrainDatabases(pg, run_id)
        dbs.prepare()
        with dbs.lease() as brain:
            seed_fixture(brain.conn, fixture)
            # The embedded server runs with synchronous_commit=off, so a crash may drop the
            # last commits; callers crash it on purpose, and the seed must survive that.
            brain.conn.execute("CHECKPOINT")
            yield pg, brain.url, fixture
    finally:
        pg.close()
