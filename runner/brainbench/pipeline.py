"""A whole benchmark run, composed in data-flow order: the orchestrator replays the corpus
through the seams and hands each unit to the stages after it (the reference diagnosis,
write-back, then metrics, which build the result document).  The one place that knows every stage; the orchestrator
itself imports none downstream of it (tests/test_import_layers.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from brainbench.corpus.loader import Corpus, LoadedFixture
from brainbench.diagnosis import reference
from brainbench.metrics.result import build_result
from brainbench.metrics.trust_stage import TrustStage
from brainbench.models.config import RunConfig
from brainbench.models.result import RunResult
from brainbench.models.shard import ShardSpec
from brainbench.models.trace import TurnTrace
from brainbench.orchestrator import run as orchestrator
from brainbench.orchestrator.progress import RunEvents
from brainbench.orchestrator.run import Progress
from brainbench.writeback.stage import WriteBackStage


class RunStages(WriteBackStage, TrustStage):
    """The reference diagnosis, write-back and continuity scoring (``WriteBackStage``), memory-trust scoring
    (``TrustStage``) and the result document."""

    build_result = staticmethod(build_result)

    def __init__(self, config: RunConfig) -> None:
        super().__init__(config)
        self.config = config

    def diagnose(self, conn: Any, item: LoadedFixture, traces: Sequence[TurnTrace],
                 contexts: Mapping[int, str | None], slug_sources: Mapping[str, set[str]]) -> list[TurnTrace]:
        return reference.diagnose_replay(conn, item, traces, contexts, slug_sources, self.config.behaviour)


def run_benchmark(config: RunConfig, corpus: Corpus, events: RunEvents | None = None,
                  resume: RunResult | None = None, notify: Progress | None = None,
                  shard: ShardSpec | None = None) -> RunResult:
    """Run the benchmark; see :func:`brainbench.orchestrator.run.run_benchmark`."""
    return orchestrator.run_benchmark(config, corpus, RunStages(config), events, resume=resume, notify=notify,
                                      shard=shard)
