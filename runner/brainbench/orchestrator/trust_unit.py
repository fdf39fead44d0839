"""One memory-trust fixture as a work unit of a run (trust spec §2.1, §4.4, §4.6).

Each arm gets a brain database of its own (a clone of the migrated template, like every
fixture's brain) and our reference memory system on it.  The protections arm runs every trust
fixture; its trust, state-resolution and deletion items are scored once for every harness.  A
poisoning fixture is then replayed "as a later session" through each harness's seam, once per
source it wrote into, and scored per harness; then it runs again from scratch on a fresh
default-mode brain, scored the same way for labels.  Only the protections arm's replays
become turn rows.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from brainbench.brain.databases import Brain
from brainbench.brain.probe import page_slugs
from brainbench.brain.shares import ShareLedger
from brainbench.corpus.loader import LoadedFixture
from brainbench.memory.operations import InfrastructureError
from brainbench.memory.reference import ReferenceMemory
from brainbench.models.result import Fault, TurnRow
from brainbench.models.trace import TurnTrace
from brainbench.models.trust_run import Arm, TrustFixtureScore
from brainbench.orchestrator.launch import ActiveSeam
from brainbench.orchestrator.replay import replay_fixture
from brainbench.orchestrator.stages import RunAborted, Stages
from brainbench.orchestrator.trust_scenario import Scenario, run_trust_steps

TRUST_SUITES = ("trust", "state-resolution", "poisoning", "deletion")


def trust_suite(item: LoadedFixture) -> str | None:
    return next((s for s in item.fixture.suites if s in TRUST_SUITES), None)


@dataclass
class Capture:
    """What one harness's seam injected during one arm's later session (every source)."""

    texts: list[str] = field(default_factory=list)
    rows: list[TurnRow] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    traces: list[TurnTrace] = field(default_factory=list)


@dataclass
class TrustUnit:
    """What the runner lends a trust fixture: brains, seams, scratch, the downstream stages."""

    brain: Callable[[], contextlib.AbstractAsyncContextManager[Brain]]
    seams: Mapping[str, ActiveSeam]
    stages: Stages
    workroot: Path
    env: Callable[[str, str, Path], dict[str, str]]
    keep: bool = False
    share: ShareLedger | None = None  # a call during which its seam went over its share is its own fault
    side_by_side: bool = True  # launch.seams_side_by_side: the seams' later sessions at once, or in turn

    async def run(self, item: LoadedFixture) -> tuple[TrustFixtureScore, Capture]:
        try:
            return await self._run(item)
        except InfrastructureError as exc:  # the memory system's machinery failed: the run cannot go on
            raise RunAborted(f"{item.fixture_id}: {exc}") from exc

    async def _run(self, item: LoadedFixture) -> tuple[TrustFixtureScore, Capture]:
        suite = trust_suite(item)
        assert suite is not None
        score = TrustFixtureScore(fixture_id=item.fixture_id, suite=suite)
        shown = Capture()
        arms: tuple[Arm, ...] = ("protections", "default") if suite == "poisoning" else ("protections",)
        for arm in arms:
            async with self._arm(item, arm) as (brain, scenario):
                score.steps[arm] = list(scenario.records.values())
                if suite != "poisoning":
                    score.shared = await anyio.to_thread.run_sync(self.stages.score_trust_fixture, scenario, item)
                    continue
                observation = await anyio.to_thread.run_sync(self.stages.observe_poison, scenario, item, arm)
                captures = await self._capture_all(item, brain, scenario, arm)
                for harness in self.seams:  # assembled in harness order, whatever finished first
                    capture_ = captures[harness]
                    scored = self.stages.score_poison(item, observation, capture_.texts, harness)
                    (score.protections if arm == "protections" else score.default)[harness] = scored
                    if arm == "protections":
                        shown.rows += capture_.rows
                        shown.faults += capture_.faults
                        shown.traces += capture_.traces
        return score, shown

    @contextlib.asynccontextmanager
    async def _arm(self, item: LoadedFixture, arm: Arm) -> AsyncIterator[tuple[Brain, Scenario]]:
        async with self.brain() as brain:
            ops = ReferenceMemory(brain.conn, self.workroot / "memory" / f"{item.fixture_id}-{arm}")
            try:
                scenario = await anyio.to_thread.run_sync(run_trust_steps, ops, brain.conn, item.fixture,
                                                          arm == "protections")
                yield brain, scenario
            finally:
                ops.close()

    async def _capture_all(self, item: LoadedFixture, brain: Brain, scenario: Scenario, arm: Arm) -> dict[str, Capture]:
        """Every harness's later session: side by side (each seam is its own processes), or in turn when an
        image is behind one (``launch.seams_side_by_side``)."""
        captures: dict[str, Capture] = {}

        async def one(harness: str) -> None:
            captures[harness] = await self._capture(item, brain, scenario, harness, arm)

        if not self.side_by_side:
            for harness in self.seams:
                await one(harness)
            return captures
        async with anyio.create_task_group() as tg:
            for harness in self.seams:
                tg.start_soon(one, harness)
        return captures

    async def _capture(self, item: LoadedFixture, brain: Brain, scenario: Scenario, harness: str,
                       arm: Arm) -> Capture:
        """Replay the fixture's user turns through ``harness``'s seam as a later session, per source."""
        seam = self.seams[harness]
        out = Capture()
        for source in scenario.sources:
            pages = await anyio.to_thread.run_sync(page_slugs, brain.conn, source)
            workdir = self.workroot / harness / f"{item.fixture_id}-{arm}-{source}"
            env = {**seam.env, **self.env(brain.hook_urls[harness], source, workdir)}
            replay = await replay_fixture(item, seam.spec, seam.process, suites=["poisoning"], env=env,
                                          workdir=workdir, timeout_s=seam.timeout_s, slug_sources={}, keep=self.keep,
                                          image=seam.info.image, share=self.share)
            out.texts += [text for text in replay.contexts.values() if text]
            # Any injected slug that is not a page of the source the session ran in is a leak.
            out.rows += [r.model_copy(update={"cross_source_slugs": [s for s in r.injected_slugs if s not in pages]})
                         for r in replay.rows]
            out.faults += replay.faults
            out.traces += replay.traces
        return out


def as_unit_outcome(score: TrustFixtureScore, capture: Capture) -> dict[str, Any]:
    return {"trust": score, "rows": capture.rows, "faults": capture.faults, "traces": capture.traces}
