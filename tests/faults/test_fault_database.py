"""The brain's Postgres goes away mid-conversation and comes back.

Timing a restart inside a whole CLI run is fragile, so this drives one real seam
program (codex, stream and exec mode) through ``Conversation`` against a private
embedded Postgres that the test stops (``pg_ctl -m immediate``, i.e. a crash) and
starts again on the same data and socket directory.  The outage turn must be an
``infra_error`` after tenacity's retries — recorded, never a silent memory miss —
and the next turn must be served again.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from brainbench.brain.server import EmbeddedPostgres
from brainbench.executors.base import SeamLaunch
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.registry import SEAMS
from brainbench.models.corpus import Fixture, PublicTurn
from outage import CountingSeam, outage_and_recovery  # type: ignore[import-not-found]
from reference_corpus import private_seeded_brain  # type: ignore[import-not-found]

FIXTURE = "kta-001-deal-recall"


@pytest.fixture(scope="module")
def seeded(reference: Path) -> Iterator[tuple[EmbeddedPostgres, str, Fixture]]:
    with private_seeded_brain(reference, FIXTURE, "faultdb") as brain:  # private: the test stops and starts it
        yield brain


@pytest.mark.parametrize("mode", ["stream", "exec"])
def test_postgres_restart_is_an_infra_fault_then_recovers(seeded: tuple[EmbeddedPostgres, str, Fixture],
                                                          mode: str, tmp_path: Path) -> None:
    pg, url, fixture = seeded
    turns = {t.turn_id: t for t in (PublicTurn.of(t) for t in fixture.turns)}
    env = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": fixture.source}

    async def scenario() -> None:
        launch = SeamLaunch(seam="codex", command=SEAMS["codex"].command(mode == "stream"),
                            mode=mode)  # type: ignore[arg-type]
        seam = CountingSeam(await LocalExecutor(pool_size=1).start(launch))
        try:
            await outage_and_recovery(seam, pg, turns, env, tmp_path, f"brainbench-dbfault-{mode}")
        finally:
            await seam.stop()

    anyio.run(scenario)

