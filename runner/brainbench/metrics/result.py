"""The result document of a run (or of merged shards): cells, faults and the metric glossary,
built from the per-unit outcomes the orchestrator kept.

A run and a merge of shard results go through :func:`build_result` alike, so the merged
document is assembled by the very code that assembles a single run.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brainbench.metrics.cells import assemble_cells, metric_names
from brainbench.metrics.glossary import glossary_for
from brainbench.models.config import RunConfig
from brainbench.models.result import NotApplicable, Receipt, RunInfo, RunResult, SeamInfo, TurnRow
from brainbench.models.seed import NOT_APPLICABLE_REASON, TRUST_NOT_APPLICABLE_REASON
from brainbench.orchestrator.outcome import FixtureOutcome


def not_applicable(config: RunConfig, image_seeded: Sequence[str], rows: Sequence[TurnRow],
                   done: Sequence[FixtureOutcome]) -> list[NotApplicable]:
    """The write-back and continuity cells image-seeded seams would have had, marked not applicable."""
    fixtures = {
        "write-back": list(dict.fromkeys(o.write_back.fixture_id for o in done if o.write_back is not None)),
        "continuity": list(dict.fromkeys([*(r.fixture_id for r in rows if r.suite == "continuity"),
                                          *(c.reader_fixture_id for o in done for c in o.continuity.values())])),
    }
    trust = {suite: [o.trust.fixture_id for o in done if o.trust is not None and o.trust.suite == suite]
             for suite in ("trust", "state-resolution", "poisoning", "deletion")}
    return [NotApplicable(harness=h, suite=suite, reason=NOT_APPLICABLE_REASON, fixtures=fixtures[suite])
            for h in image_seeded for suite in config.suites if suite in fixtures] + [
        # The memory-trust steps reach our reference memory system only, never an image's own brain.
        NotApplicable(harness=h, suite=suite, reason=TRUST_NOT_APPLICABLE_REASON, fixtures=trust[suite])
        for h in image_seeded for suite in config.suites if trust.get(suite)]


def build_result(config: RunConfig, *, fixtures_hash: str, harness_sha: str, seams: Sequence[SeamInfo],
                 keyed: Sequence[tuple[str, FixtureOutcome]], run: dict[str, Any], receipt_ts: str,
                 meta_extra: dict[str, Any] | None = None) -> RunResult:
    """The result document of ``keyed`` outcomes, in the order given.

    ``run`` holds the RunInfo fields that describe the process (id, times, executor,
    jobs, completion); everything graded is derived here from the outcomes alone.
    """
    done = [o for _, o in keyed]
    rows = [r for o in done for r in o.rows]
    faults = [f for o in done for f in o.faults]
    image_seeded = [s.harness for s in seams if s.brain_contract is not None]
    cells = assemble_cells(config, {s.harness: s.seam for s in seams}, rows, done, image_seeded)
    fault_counts: dict[str, int] = {}
    for f in faults:
        fault_counts[f.fault_class] = fault_counts.get(f.fault_class, 0) + 1
    meta_run = RunInfo.model_validate({
        "harnesses": list(config.harnesses), "suites": list(config.suites),
        "completed_fixtures": [k for k, _ in keyed], "seams": list(seams), "fault_counts": fault_counts,
        **run,
    })
    receipt = Receipt(
        fixtures_hash=fixtures_hash, harness_sha=harness_sha, ts=receipt_ts, cmd_args=config.cmd_args,
        seed=config.seed, include_holdout=config.include_holdout, llm=config.llm,
    )
    return RunResult.model_validate({
        "receipt": receipt, "cells": cells, "turn_rows": rows,
        "seed_failures": [o.seed_failure for o in done if o.seed_failure is not None],
        "_meta": {"metric_glossary": glossary_for(metric_names(cells)), "run": meta_run, "faults": faults,
                  "not_applicable": not_applicable(config, image_seeded, rows, done),
                  "trust": [o.trust for o in done if o.trust is not None], **(meta_extra or {})},
    })
