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
from brainbench.brain.server import DatabaseFailure, EmbeddedPostgres
from brainbench.executors.base import SeamLaunch
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.registry import SEAMS
from brainbench.models.corpus import Fixture, PublicTurn
from brainbench.orchestrator.conversation import Conversation
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



def test_a_dead_brain_server_stops_the_call_at_once_instead_of_being_retried(
        seeded: tuple[EmbeddedPostgres, str, Fixture], tmp_path: Path) -> None:
    """With the run's server to ask (``brain_down``), the outage is the run's failure after one attempt,
    in the server's own words, and no retry (nor its log line) races the run's one-line report."""
    pg, url, fixture = seeded
    turns = {t.turn_id: t for t in (PublicTurn.of(t) for t in fixture.turns)}
    env = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": fixture.source}

    async def scenario() -> None:
        launch = SeamLaunch(seam="codex", command=SEAMS["codex"].command(True), mode="stream")
        seam = CountingSeam(await LocalExecutor(pool_size=1).start(launch))
        conv = Conversation(SEAMS["codex"], seam, "brainbench-dbdown", tmp_path / "1", env, timeout_s=30,
                            brain_down=pg.diagnose)
        try:
            assert (await conv.user_turn(turns[1])).graded.fault is None  # a live server: diagnose is not asked
            await anyio.to_thread.run_sync(pg.stop)
            before = seam.calls
            with pytest.raises(DatabaseFailure, match=r"^the brain database failed: the embedded server") as caught:
                await conv.user_turn(turns[4])
            assert seam.calls - before == 1, "no retry against a dead server"
            assert "not running" in str(caught.value) or "died" in str(caught.value)
        finally:
            await anyio.to_thread.run_sync(pg.start)
            await seam.stop()

    anyio.run(scenario)
