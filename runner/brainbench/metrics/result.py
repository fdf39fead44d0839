"""The result document of a run (or of merged shards): cells, faults and the metric glossary,
built from the per-unit outcomes the orchestrator kept.

A run and a merge of shard results go through :func:`build_result` alike, so the merged
document is assembled by the very code that assembles a single run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from brainbench.metrics.cells import assemble_cells, metric_names
from brainbench.metrics.glossary import glossary_for
from brainbench.models.config import RunConfig
from brainbench.models.result import NotApplicable, Receipt, RunInfo, RunResult, SeamInfo, TurnRow
from brainbench.models.seed import NOT_APPLICABLE_REASON, TRUST_NOT_APPLICABLE_REASON
from brainbench.orchestrator.outcome import FixtureOutcome


def not_applicable(config: RunConfig, image_seeded: Mapping[str, Mapping[str, str]], rows: Sequence[TurnRow],
                   done: Sequence[FixtureOutcome]) -> list[NotApplicable]:
    """The cells image-seeded seams would have had for the suites their image has no path to
    (``image_seeded``: harness → suite → reason), marked not applicable."""
    fixtures = {
        "write-back": list(dict.fromkeys(o.write_back.fixture_id for o in done if o.write_back is not None)),
        "continuity": list(dict.fromkeys([*(r.fixture_id for r in rows if r.suite == "continuity"),
                                          *(c.reader_fixture_id for o in done for c in o.continuity.values())])),
    }
    trust = {suite: [o.trust.fixture_id for o in done if o.trust is not None and o.trust.suite == suite]
             for suite in ("trust", "state-resolution", "poisoning", "deletion")}
    out = [NotApplicable(harness=h, suite=suite, reason=na[suite], fixtures=fixtures[suite])  # type: ignore[arg-type]
           for h, na in image_seeded.items() for suite in config.suites if suite in fixtures and suite in na]
    # The memory-trust steps reach an image's own brain only through its operations command.
    return out + [NotApplicable(harness=h, suite=suite, reason=na[suite], fixtures=trust[suite])  # type: ignore[arg-type]
                  for h, na in image_seeded.items() for suite in config.suites if trust.get(suite) and suite in na]


def image_seeded_of(seams: Sequence[SeamInfo]) -> dict[str, dict[str, str]]:
    """harness → suite → n/a reason, for every image-seeded seam (a result from before seed contract v2
    carries no reasons: its seams had v1's)."""
    out: dict[str, dict[str, str]] = {}
    for s in seams:
        if s.brain_contract is None:
            continue
        na = s.brain_not_applicable
        out[s.harness] = dict(na) if na is not None else {
            **{suite: NOT_APPLICABLE_REASON for suite in ("write-back", "continuity")},
            **{suite: TRUST_NOT_APPLICABLE_REASON for suite in ("trust", "state-resolution", "poisoning", "deletion")}}
    return out


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
    image_seeded = image_seeded_of(seams)
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
