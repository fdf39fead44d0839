"""The brain-outage scenario shared by the local and the Docker fault suites.

A seam answers, the embedded Postgres crash-stops, the next turn must be an
``infra_error`` after every retry (never a silent miss), and after the restart
the same seam process answers again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import anyio
from brainbench.brain.server import EmbeddedPostgres
from brainbench.executors.base import HookCall, HookOutcome, SeamProcess
from brainbench.harnesses.registry import SEAMS
from brainbench.models.corpus import PublicTurn
from brainbench.orchestrator.conversation import INFRA_ATTEMPTS, Conversation


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


async def outage_and_recovery(seam: CountingSeam, pg: EmbeddedPostgres, turns: Mapping[int, PublicTurn],
                              env: Mapping[str, str], workdir: Path, name: str,
                              on_first_answer: Callable[[], object] = lambda: None) -> None:
    """Drive kta-001 through the codex seam across a Postgres crash and restart, asserting each step."""
    spec = SEAMS["codex"]
    conv = Conversation(spec, seam, name, workdir / "1", env, timeout_s=30)
    first = await conv.user_turn(turns[1])
    assert first.graded.fault is None and "companies/widget-co" in first.slugs, first
    on_first_answer()  # lets a caller note which process answered before the outage
    conv.assistant_turn(turns[2])
    await anyio.to_thread.run_sync(pg.stop)
    try:
        before = seam.calls
        lost = await conv.user_turn(turns[4])
        attempts = seam.calls - before
    finally:
        await anyio.to_thread.run_sync(pg.start)
    # Not silence: a fault of the infrastructure class, after every retry, with the seam's reason.
    assert lost.graded.fault == "infra_error", lost.graded
    assert "brain unavailable" in lost.graded.detail
    assert lost.context is None and lost.slugs == []
    assert attempts == INFRA_ATTEMPTS
    assert conv.faults == [(4, lost.graded)]
    # The server is back on the same socket: the same seam process serves again.  A new
    # session, because this one already mentioned turn 4's names.
    fresh = Conversation(spec, seam, f"{name}-2", workdir / "2", env, timeout_s=30)
    before = seam.calls
    again = await fresh.user_turn(turns[4])
    assert again.graded.fault is None, again.graded
    assert "people/charlie-example" in again.slugs
    assert seam.calls - before == 1
    assert fresh.faults == []
