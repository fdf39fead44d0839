"""The write-back stage of a run, as the orchestrator calls it (``orchestrator.stages.Stages``).

Chooses the extractor once per run (the gold extractor, or the model-based one under
``--llm`` with its spend cap) and turns what must stop the run into ``RunAborted``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from brainbench.brain.seeding import SeedError
from brainbench.corpus.loader import LoadedFixture
from brainbench.models.config import RunConfig
from brainbench.models.memory import ReadItem
from brainbench.models.write_back_doc import WriteBackDocument
from brainbench.models.writeback import ContinuityScore, WriteBackScore
from brainbench.orchestrator.stages import RunAborted
from brainbench.writeback import extractors
from brainbench.writeback.continuity import score_continuity, score_continuity_by
from brainbench.writeback.document import score_image_write_back, write_back_document
from brainbench.writeback.pipeline import run_write_back


class WriteBackStage:
    def __init__(self, config: RunConfig) -> None:
        # One model-based extractor per run: its budget spans every fixture.
        self.llm: Any = extractors.LlmExtractor.from_env(config.budget_usd) if config.llm else None

    def write_back(self, conn: Any, item: LoadedFixture) -> WriteBackScore:
        extractor = self.llm if self.llm is not None else extractors.GoldExtractor(item)
        try:
            return run_write_back(conn, item, extractor)
        except (SeedError, extractors.BudgetExhaustedError, extractors.LlmError) as exc:
            raise RunAborted(f"write-back failed for {item.fixture_id}: {exc}") from exc

    def score_continuity(self, conn: Any, reader: LoadedFixture, injected: set[str]) -> ContinuityScore:
        return score_continuity(conn, reader, injected)

    def write_back_document(self, item: LoadedFixture) -> WriteBackDocument:
        # Under --llm the image extracts by itself: it gets the transcript and no facts.
        try:
            return write_back_document(item, None if self.llm is not None else extractors.GoldExtractor(item))
        except SeedError as exc:
            raise RunAborted(f"write-back failed for {item.fixture_id}: {exc}") from exc

    def score_image_write_back(self, item: LoadedFixture, items: Sequence[ReadItem],
                               failure: str | None) -> WriteBackScore:
        return score_image_write_back(item, items, failure)

    def score_continuity_by(self, reader: LoadedFixture, injected: set[str],
                            probe: Callable[[Sequence[str]], bool] | None) -> ContinuityScore:
        return score_continuity_by(reader, injected, probe)
