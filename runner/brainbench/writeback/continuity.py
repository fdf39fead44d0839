"""Score a continuity pair for one harness (spec §7).

A decision is recalled when the reader saw one of its expected pages, or —
failing that — when the post-write brain holds a live fact in the reader's
source containing every keyword.  The probe is deliberately not limited to the
writer's facts or entity: gbrain's isn't either.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import psycopg

from brainbench.brain.store import fact_keyword_probe
from brainbench.corpus.loader import LoadedFixture
from brainbench.models.writeback import ContinuityAggregate, ContinuityScore


def score_continuity(conn: psycopg.Connection, reader: LoadedFixture, injected_slugs: set[str]) -> ContinuityScore:
    """``injected_slugs`` = union of the slugs injected on the reader's rows for one harness."""
    source = reader.fixture.source
    return score_decisions(reader, injected_slugs, lambda keywords: fact_keyword_probe(conn, source, keywords))


def score_decisions(reader: LoadedFixture, injected_slugs: set[str],
                    probe: Callable[[list[str]], bool]) -> ContinuityScore:
    """The pair's decisions against the injected slugs, ``probe`` asked only for decisions they missed."""
    block = reader.gold.continuity
    pair_id = block.pair_id if block else (reader.fixture.continuity.pair_id if reader.fixture.continuity else "")
    decisions = block.decisions if block else []
    hits: dict[str, bool] = {}
    failed: list[str] = []
    for decision in decisions:
        hit = any(slug in injected_slugs for slug in decision.expected_slugs)
        if not hit and decision.match_keywords:
            hit = probe(decision.match_keywords)
        hits[decision.decision_id] = hit
        if not hit:
            failed.append(f"{pair_id}/{decision.decision_id}")
    return ContinuityScore(
        pair_id=pair_id,
        reader_fixture_id=reader.fixture_id,
        gold_total=len(decisions),
        gold_failed=len(failed),
        hits=hits,
        failed_items=failed,
    )


def aggregate_continuity(scores: Iterable[ContinuityScore]) -> ContinuityAggregate:
    """Σ over the pairs one harness read; ``.continuity_rate()`` is the cell metric."""
    return ContinuityAggregate.of(scores)
