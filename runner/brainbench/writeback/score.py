"""Score one fixture's write-back (spec §6.3) and aggregate fixtures (§6.4).

A gold fact survives when some stored row of the conversation page contains all
its keywords (case-insensitive) and, if the gold names an entity, carries that
entity.  Provenance is judged only on surviving rows.
"""

from __future__ import annotations

from collections.abc import Iterable

import psycopg

from brainbench.brain.store import FactRow, facts_for_page
from brainbench.corpus.loader import LoadedFixture
from brainbench.corpus.rules import turn_key
from brainbench.jscase import js_lower
from brainbench.models.corpus import GoldFact
from brainbench.models.writeback import WriteBackAggregate, WriteBackScore
from brainbench.writeback.page import conversation_slug
from brainbench.writeback.segment import session_id

EXTRACT_SOURCE = "cli:extract-conversation-facts"
TERMINAL_AUDIT_SOURCE = "cli:extract-conversation-facts:terminal:v2"


def gold_items(loaded: LoadedFixture) -> list[tuple[str, GoldFact]]:
    """(turn key, gold fact) for every gold fact: fixture turns in array order, then each turn's facts.

    gbrain's goldFactsWithSourceText walks ``fixture.turns`` and reads ``gold.turns[String(turn_id)]``.
    """
    turns = loaded.gold.turns
    out: list[tuple[str, GoldFact]] = []
    for turn in loaded.fixture.turns:
        key = turn_key(turn.turn_id)
        out += [(key, spec) for spec in (turns[key].gold_facts if key in turns else None) or []]
    return out


def _has_keywords(text: str, keywords: Iterable[str]) -> bool:
    # JavaScript toLowerCase on both sides, as gbrain's includes() test.
    lowered = js_lower(text)
    return all(js_lower(k) in lowered for k in keywords)


def _matches(row: FactRow, spec: GoldFact) -> bool:
    return _has_keywords(row.fact, spec.match_keywords) and (
        spec.entity_slug is None or row.entity_slug == spec.entity_slug
    )


def stored_rows(conn: psycopg.Connection, source_id: str, page_slug: str) -> list[FactRow]:
    # facts_for_page orders by id (= insertion order), which is what PGLite returns here.
    return facts_for_page(conn, source_id, page_slug, TERMINAL_AUDIT_SOURCE)


def score_write_back(conn: psycopg.Connection, loaded: LoadedFixture) -> WriteBackScore:
    fixture = loaded.fixture
    return score_rows(loaded, stored_rows(conn, fixture.source, conversation_slug(fixture.fixture_id)))


def score_rows(loaded: LoadedFixture, rows: list[FactRow]) -> WriteBackScore:
    """The score of the conversation page's stored ``rows`` (ours, or what an image's recall returned;
    no database: tests hand-build rows)."""
    fixture = loaded.fixture
    source = fixture.source
    slug = conversation_slug(fixture.fixture_id)
    items = gold_items(loaded)
    consumed: set[int] = set()
    survived = provenance_ok = 0
    failed: list[str] = []
    for turn, spec in items:
        row = next((r for r in rows if r.id not in consumed and _matches(r, spec)), None)
        if row is None:
            failed.append(f"{fixture.fixture_id}#{turn}: gold fact lost: {spec.gist}")
            continue
        consumed.add(row.id)
        survived += 1
        if row.source == EXTRACT_SOURCE and row.source_session == session_id(slug) and row.source_markdown_slug == slug:
            provenance_ok += 1
        else:
            failed.append(
                f"{fixture.fixture_id}#{turn}: wrong provenance: {spec.gist} "
                f"(source={row.source!r}, source_session={row.source_session!r})"
            )
    matched_any = sum(1 for r in rows if any(_has_keywords(r.fact, spec.match_keywords) for _, spec in items))
    return WriteBackScore(
        fixture_id=fixture.fixture_id,
        page_slug=slug,
        source_id=source,
        gold_total=len(items),
        gold_failed=len(items) - provenance_ok,
        survived=survived,
        provenance_ok=provenance_ok,
        stored_rows=len(rows),
        matched_any_gold=matched_any,
        failed_items=failed,
    )


def aggregate_write_back(scores: Iterable[WriteBackScore]) -> WriteBackAggregate:
    """Σ over fixtures; ``.metrics(llm=...)`` gives the cell's (unrounded) metrics."""
    return WriteBackAggregate.of(scores)
