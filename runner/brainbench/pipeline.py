"""A whole benchmark run, composed in data-flow order: the orchestrator replays the corpus
through the seams and hands each unit to the stages after it (write-back, then metrics,
which build the result document).  The one place that knows every stage; the orchestrator
itself imports none downstream of it (tests/test_import_layers.py).
"""

from __future__ import annotations

from brainbench.corpus.loader import Corpus
from brainbench.metrics.result import build_result
from brainbench.metrics.trust_stage import TrustStage
from brainbench.models.config import RunConfig
from brainbench.models.result import RunResult
from brainbench.models.shard import ShardSpec
from brainbench.orchestrator import run as orchestrator
from brainbench.orchestrator.run import Progress
from brainbench.writeback.stage import WriteBackStage


class RunStages(WriteBackStage, TrustStage):
    """Write-back and continuity scoring (``WriteBackStage``), memory-trust scoring (``TrustStage``) and the
    result document."""

    build_result = staticmethod(build_result)


def run_benchmark(config: RunConfig, corpus: Corpus, progress: Progress | None = None,
                  resume: RunResult | None = None, notify: Progress | None = None,
                  shard: ShardSpec | None = None) -> RunResult:
    """Run the benchmark; see :func:`brainbench.orchestrator.run.run_benchmark`."""
    return orchestrator.run_benchmark(config, corpus, RunStages(config), progress, resume=resume, notify=notify,
                                      shard=shard)
