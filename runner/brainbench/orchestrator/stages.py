"""What the orchestrator hands on: the reference diagnosis, write-back, continuity scoring, the result.

Those stages come after the orchestrator in the data flow (orchestrator → diagnosis, write-back →
metrics → report), so the orchestrator never imports them: it receives them as one
:class:`Stages` object from the composition that runs a benchmark (``brainbench.pipeline``).
The diagnosis replays a turn through our reference reflex, which is the seams' side of the wire:
handed in as a stage, the orchestrator itself knows the seams only by what crosses the wire.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from brainbench.corpus.loader import LoadedFixture
from brainbench.models.config import RunConfig
from brainbench.models.memory import ReadItem
from brainbench.models.result import RunResult, SeamInfo
from brainbench.models.trace import TurnTrace
from brainbench.models.trust_run import Arm, SuiteScore
from brainbench.models.write_back_doc import WriteBackDocument
from brainbench.models.writeback import ContinuityScore, WriteBackScore
from brainbench.orchestrator.outcome import FixtureOutcome
from brainbench.orchestrator.trust_scenario import Scenario


class RunAborted(RuntimeError):
    """The run cannot produce a valid result (e.g. write-back could not store its page)."""


class Stages(Protocol):
    """The downstream stages one run uses; blocking calls, run in a worker thread."""

    def write_back(self, conn: Any, item: LoadedFixture) -> WriteBackScore:
        """Write the fixture's conversation back into the leased brain and score it; raises
        :class:`RunAborted` when the run cannot go on."""
        ...

    def diagnose(self, conn: Any, item: LoadedFixture, traces: Sequence[TurnTrace],
                 contexts: Mapping[int, str | None], slug_sources: Mapping[str, set[str]]) -> list[TurnTrace]:
        """One seam's traces of ``item`` with verdicts and reasons, from a reference replay on the
        fixture's brain while it is still leased (``conn``)."""
        ...

    def score_continuity(self, conn: Any, reader: LoadedFixture, injected: set[str]) -> ContinuityScore: ...

    # --- seed contract v2: an image's own write-back --------------------------------------------

    def write_back_document(self, item: LoadedFixture) -> WriteBackDocument:
        """The session an image's ``write_back`` command reads (the run's extractor's facts in it)."""
        ...

    def score_image_write_back(self, item: LoadedFixture, items: Sequence[ReadItem],
                               failure: str | None) -> WriteBackScore:
        """An image's write-back, graded by the facts its ``recall`` returned (``failure``: none could be)."""
        ...

    def score_continuity_by(self, reader: LoadedFixture, injected: set[str],
                            probe: Callable[[Sequence[str]], bool] | None) -> ContinuityScore:
        """Continuity with the keyword probe given (an image's own read, or None)."""
        ...

    def score_trust_fixture(self, scenario: Scenario, item: LoadedFixture) -> SuiteScore:
        """A trust, state-resolution or deletion fixture's items, judged on the brain its steps left."""
        ...

    def observe_poison(self, scenario: Scenario, item: LoadedFixture, arm: Arm) -> Any:
        """Where a poisoning fixture's canaries ended up on this arm's brain (and its context pack)."""
        ...

    def score_poison(self, item: LoadedFixture, observation: Any, texts: Sequence[str], harness: str) -> SuiteScore:
        """A poisoning fixture's items for one harness, from the arm's observation and what its seam injected."""
        ...

    def build_result(self, config: RunConfig, *, fixtures_hash: str, harness_sha: str, seams: Sequence[SeamInfo],
                     keyed: Sequence[tuple[str, FixtureOutcome]], run: dict[str, Any], receipt_ts: str,
                     meta_extra: dict[str, Any] | None = None) -> RunResult: ...
