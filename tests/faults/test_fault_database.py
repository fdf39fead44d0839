"""The brain's Postgres goes away mid-conversation and comes back.

Timing a restart inside a whole CLI run is fragile, so this drives one real seam
program (codex, stream and exec mode) through ``Conversation`` against a private
embedded Postgres that the test stops (``pg_ctl -m immediate``, i.e. a crash) and
starts again on the same data and socket directory.  The outage turn must be an
``infra_error`` after tenacity's retries — recorded, never a silent memory miss —
and the next turn must be served again.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import pytest
from brainbench.brain import server as server_module
from brainbench.brain.databases import BrainDatabases
from brainbench.brain.seeding import seed_fixture
from brainbench.brain.server import EmbeddedPostgres
from brainbench.brain.store import connect
from brainbench.executors.base import HookCall, HookOutcome, SeamLaunch, SeamProcess
from brainbench.executors.local import LocalExecutor
from brainbench.models.corpus import Fixture, PublicTurn
from brainbench.orchestrator.conversation import INFRA_ATTEMPTS, Conversation
from brainbench.seams.registry import SEAMS

FIXTURE = "kta-001-deal-recall"


def stop(pg: EmbeddedPostgres) -> None:
    # -m immediate: the postmaster dies without a checkpoint, as in a crash or an OOM kill.
    pg._run([pg._bin("pg_ctl"), "-D", str(pg.data), "-m", "immediate", "-w", "stop"], timeout=30)


def start(pg: EmbeddedPostgres) -> None:
    # Same data dir and socket dir, so every URL handed to the seam is valid again after recovery.
    pg._run([pg._bin("pg_ctl"), "-D", str(pg.data), "-w", "-l", str(pg.root / "server.log"),
             "-o", f"-h '' -k {pg.socket_dir} {server_module._FAST_SETTINGS}", "start"])


@dataclass
class CountingSeam(SeamProcess):
    """Passes every call through to the real seam process, counting attempts (tenacity retries included)."""

    inner: SeamProcess
    calls: int = 0

    async def call(self, call: HookCall) -> HookOutcome:
        self.calls += 1
        return await self.inner.call(call)

    async def stop(self) -> None:
        await self.inner.stop()


@pytest.fixture(scope="module")
def seeded(reference: Path) -> Iterator[tuple[EmbeddedPostgres, str, Fixture]]:
    path = reference / "corpus" / "fixtures" / f"{FIXTURE}.fixture.json"
    if not path.exists():
        pytest.skip(f"reference fixture {path} is missing")
    fixture = Fixture.model_validate(json.loads(path.read_text()))
    pg = EmbeddedPostgres()  # private: this test stops and starts it
    dbs = BrainDatabases(pg, "faultdb")
    try:
        dbs.prepare()
        _, url = dbs.create()
        conn = connect(url)
        try:
            seed_fixture(conn, fixture)
        finally:
            conn.close()
        yield pg, url, fixture
    finally:
        pg.close()


@pytest.mark.parametrize("mode", ["stream", "exec"])
def test_postgres_restart_is_an_infra_fault_then_recovers(seeded: tuple[EmbeddedPostgres, str, Fixture],
                                                          mode: str, tmp_path: Path) -> None:
    pg, url, fixture = seeded
    spec = SEAMS["codex"]
    turns = {t.turn_id: t for t in (PublicTurn.of(t) for t in fixture.turns)}
    env = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": fixture.source}

    async def scenario() -> None:
        launch = SeamLaunch(seam="codex", command=spec.command(mode == "stream"), mode=mode)  # type: ignore[arg-type]
        seam = CountingSeam(await LocalExecutor(pool_size=1).start(launch))
        # 30 s: an exec-mode call pays a full interpreter + psycopg start on a loaded machine.
        conv = Conversation(spec, seam, f"brainbench-dbfault-{mode}", tmp_path, env, timeout_s=30)
        try:
            first = await conv.user_turn(turns[1])
            assert first.graded.fault is None and "companies/widget-co" in first.slugs, first

            conv.assistant_turn(turns[2])
            await anyio.to_thread.run_sync(stop, pg)
            try:
                before = seam.calls
                lost = await conv.user_turn(turns[4])
                attempts = seam.calls - before
            finally:
                await anyio.to_thread.run_sync(start, pg)
            # Not silence: a fault of the infrastructure class, after every retry, with the seam's reason.
            assert lost.graded.fault == "infra_error", lost.graded
            assert "brain unavailable" in lost.graded.detail
            assert lost.context is None and lost.slugs == []
            assert attempts == INFRA_ATTEMPTS
            assert conv.faults == [(4, lost.graded)]

            # The server is back on the same socket: the same seam process (same warm worker in stream
            # mode) serves again.  A new session, because this one already mentioned turn 4's names.
            fresh = Conversation(spec, seam, f"brainbench-dbfault-{mode}-2", tmp_path / "2", env, timeout_s=30)
            before = seam.calls
            again = await fresh.user_turn(turns[4])
            assert again.graded.fault is None, again.graded
            assert "people/charlie-example" in again.slugs
            assert seam.calls - before == 1
            assert fresh.faults == [] and len(conv.faults) == 1
        finally:
            await seam.stop()

    anyio.run(scenario)

