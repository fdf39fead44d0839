"""The memory-trust suites' cells (trust spec §4.6): trust, state-resolution and deletion carry the
same numbers in every harness's cell; poisoning is scored per harness, protections and default
arm together, with isolation and injected tokens from the protections arm's turn rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brainbench.metrics.poisoning import poisoning_metrics
from brainbench.metrics.retrieval import avg_injected_tokens
from brainbench.metrics.trust_suites import suite_metrics
from brainbench.models.result import TurnRow
from brainbench.models.trust_run import SuiteScore, TrustFixtureScore


def _sum(scores: Sequence[SuiteScore]) -> SuiteScore:
    total = SuiteScore()
    for s in scores:
        total = total.add(s)
    return total


def trust_cell_parts(harness: str, suite: str, outcomes: Sequence[Any],
                     rows: Sequence[TurnRow]) -> tuple[int, int, dict[str, float | int], list[str]] | None:
    """(gold_total, gold_failed, metrics, fixtures) of one trust cell, or None when it has no fixture."""
    scores: list[TrustFixtureScore] = [o.trust for o in outcomes if o.trust is not None and o.trust.suite == suite]
    if not scores:
        return None
    fixtures = list(dict.fromkeys(s.fixture_id for s in scores))
    if suite != "poisoning":
        # An image graded through its operations command has a score of its own (seed contract v2).
        total = _sum([s.by_harness[harness] if harness in s.by_harness else s.shared for s in scores
                      if harness in s.by_harness or s.shared is not None])
        return total.gold_total, total.gold_failed, suite_metrics(suite, total.counts), fixtures
    mine = [s for s in scores if harness in s.protections]
    if not mine:
        return None
    protections = _sum([s.protections[harness] for s in mine])
    defaults = [s.default[harness] for s in mine if harness in s.default]
    default = _sum(defaults) if defaults else None
    poisoned = [r for r in rows if r.harness == harness and r.suite == "poisoning"]
    metrics = poisoning_metrics(protections.counts, default.counts if default else None)
    metrics |= {"source_isolation_violations": sum(len(r.cross_source_slugs) for r in poisoned),
                "avg_injected_tokens": avg_injected_tokens(poisoned)}
    total = protections.gold_total + (default.gold_total if default else 0)
    failed = protections.gold_failed + (default.gold_failed if default else 0)
    return total, failed, metrics, list(dict.fromkeys(s.fixture_id for s in mine))
