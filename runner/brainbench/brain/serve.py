"""One seeded brain that outlives a run: for ``brainbench brain serve`` and ``doctor``.

A hook author needs a brain to call their hook against by hand; ``doctor`` needs
one so its happy path can demand a known slug.  Both get it the way a run does:
a database cloned from the migrated template, seeded, and dropped on exit.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from brainbench.brain.databases import BrainDatabases
from brainbench.brain.seeding import SeedReport
from brainbench.brain.server import PostgresServer

DB_ENV = "BRAINBENCH_DATABASE_URL"
SOURCE_ENV = "BRAINBENCH_SOURCE"


@dataclass(frozen=True)
class ServedBrain:
    database: str
    # What the runner itself uses (owner rights: seeding, scoring).
    url: str
    # What a hook is handed: a least-privilege role that may read this database only.
    hook_url: str
    source: str
    report: SeedReport = field(default_factory=SeedReport)

    def hook_env(self) -> dict[str, str]:
        """The per-call environment of the image contract, exactly as a run sets it."""
        return {DB_ENV: self.hook_url, SOURCE_ENV: self.source}


HOOK_SEAM = "hook"


@contextlib.contextmanager
def served_brain(server: PostgresServer, seed: Callable[[Any], SeedReport], *, source: str = "default",
                 label: str | None = None) -> Iterator[ServedBrain]:
    """A fresh migrated brain seeded by ``seed(conn)``; dropped (with its template) on exit."""
    # The hook gets what a run gives it: its own read-only role on this one database (brain/roles.py).
    dbs = BrainDatabases(server, label or f"serve{uuid.uuid4().hex[:8]}", [HOOK_SEAM])
    try:
        dbs.prepare()
        with dbs.lease() as brain:
            report = seed(brain.conn)
            yield ServedBrain(brain.name, brain.url, brain.hook_urls[HOOK_SEAM], source, report)
    finally:
        dbs.close()
