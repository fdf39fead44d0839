"""Drive gbrain's conversation-fact extraction for one fixture and score it (spec §6).

render page → import → parse → segment → extract → insert with provenance →
terminal audit row → receipt page + rollup → score.  Only the extractor is
swappable; everything else is the pipeline whose fidelity is being measured.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime

import psycopg

from brainbench.brain.seeding import SeedError
from brainbench.brain.store import import_page
from brainbench.corpus.loader import LoadedFixture
from brainbench.jsdate import JSDate
from brainbench.jsjson import stringify
from brainbench.models.writeback import ExtractedFact, WriteBackScore
from brainbench.writeback.extractors import Extractor
from brainbench.writeback.page import MissingTimestampError, conversation_slug, render_conversation_page
from brainbench.writeback.parse import parse_messages
from brainbench.writeback.score import EXTRACT_SOURCE, TERMINAL_AUDIT_SOURCE, score_write_back
from brainbench.writeback.segment import Segment, segment_input, session_id, split_into_segments

RECEIPT_KIND = "facts.conversation"
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"


class WriteBackError(SeedError):
    """The conversation page could not be written.

    A SeedError raised from inside write-back is not a per-fixture seed failure:
    gbrain's harness does not catch it, so the whole run fails (spec §5.6).
    """


@dataclass(frozen=True)
class ExtractionRun:
    segments: int
    facts_inserted: int
    receipt_slug: str | None
    cost_usd: float


def _base36(n: int) -> str:
    out = ""
    while True:
        n, digit = divmod(n, 36)
        out = _BASE36[digit] + out
        if n == 0:
            return out


def _ms(now: datetime) -> datetime:
    # gbrain's clock is Date.now(): millisecond resolution.
    now = now.astimezone(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def _js_iso(now: datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def receipt_run_id(now: datetime, source_id: str) -> str:
    return f"ecf-{_base36(int(_ms(now).timestamp() * 1000))}-{source_id[:4]}"


def receipt_slug(now: datetime, source_id: str) -> str:
    # The short id is the first 8 chars of the run id: "ecf-" + 4 base36 chars of the clock.
    short_id = receipt_run_id(now, source_id)[:8]
    return f"extracts/{_ms(now).date().isoformat()}/{RECEIPT_KIND}/{source_id}/{short_id}/round-full"


def _segment_valid_from(segment: Segment) -> datetime | None:
    # new Date(startIso), unless the parse fell back to the epoch (a 1970- start).
    if segment.start_iso.startswith("1970-"):
        return None
    at = segment.messages[0].time
    return None if at is None else JSDate(at).to_datetime()


def _insert_segment_facts(
    conn: psycopg.Connection, source_id: str, slug: str, segment: Segment, facts: list[ExtractedFact], first_row: int
) -> int:
    """One transaction per segment, as gbrain's insertFacts batch; returns rows actually inserted."""
    inserted = 0
    context = f"from {slug} segment {segment.start_iso}..{segment.end_iso}"
    with conn.transaction():
        for offset, fact in enumerate(facts):
            row = conn.execute(
                "INSERT INTO facts (source_id, entity_slug, fact, kind, notability, context, valid_from, source,"
                " source_session, confidence, row_num, source_markdown_slug)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (source_id, source_markdown_slug, row_num) DO NOTHING RETURNING id",
                (source_id, fact.entity_slug, fact.fact, fact.kind, fact.notability, context,
                 _segment_valid_from(segment), EXTRACT_SOURCE, session_id(slug), fact.confidence,
                 first_row + offset, slug),
            ).fetchone()
            inserted += row is not None
    return inserted


def _write_receipt(conn: psycopg.Connection, source_id: str, now: datetime, total_rows: int, cost_usd: float) -> str:
    slug = receipt_slug(now, source_id)
    run_id = receipt_run_id(now, source_id)
    title = f"{RECEIPT_KIND} — full — {source_id}"
    at = _js_iso(now)
    # gbrain stores this frontmatter as jsonb, so its original key order is not
    # observable; we keep the order gbrain's stored row shows.
    frontmatter = {
        "kind": RECEIPT_KIND,
        "type": "extract_receipt",
        "round": "full",
        "run_id": run_id,
        "cost_usd": cost_usd,
        "source_id": source_id,
        "total_rows": total_rows,
        "extracted_at": at,
        "dream_generated": True,
        "raw_trace_exempt": True,
        "raw_trace_exempt_reason": "operation receipt; provenance is run_id + round",
    }
    body = (
        f"# {RECEIPT_KIND} — round full\n\nExtracted {total_rows} facts from 1/1 eligible pages.\n\n"
        f"Source: `{source_id}`\nRun: `{run_id}`\nRound: `full`\nExtracted at: {at}\n\n"
        f"Rows extracted: **{total_rows}**\n"
    )
    canonical = {"title": title, "type": "extract_receipt", "compiled_truth": body, "timeline": "",
                 "frontmatter": frontmatter, "tags": []}
    content_hash = hashlib.sha256(stringify(canonical).encode("utf-8")).hexdigest()
    with conn.transaction():
        conn.execute(
            "INSERT INTO pages (source_id, slug, type, title, compiled_truth, frontmatter, content_hash)"
            " VALUES (%s, %s, 'extract_receipt', %s, %s, %s, %s)"
            " ON CONFLICT (source_id, slug) DO UPDATE SET title = EXCLUDED.title,"
            " compiled_truth = EXCLUDED.compiled_truth, frontmatter = EXCLUDED.frontmatter,"
            " content_hash = EXCLUDED.content_hash, deleted_at = NULL, updated_at = now()",
            (source_id, slug, title, body, stringify(frontmatter), content_hash),
        )
        conn.execute(
            "INSERT INTO extract_rollups (run_id, source_id, kind, total_rows) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (run_id) DO UPDATE SET total_rows = EXCLUDED.total_rows",
            (run_id, source_id, RECEIPT_KIND, total_rows),
        )
    return slug


def extract_conversation_facts(
    conn: psycopg.Connection, source_id: str, slug: str, extractor: Extractor, *, now: datetime
) -> ExtractionRun:
    """gbrain's runExtractConversationFactsCore for one page (kill switch bypassed, no sleeps)."""
    now = _ms(now)
    page = conn.execute(
        "SELECT title, compiled_truth, timeline, content_hash FROM pages WHERE source_id = %s AND slug = %s"
        " AND deleted_at IS NULL",
        (source_id, slug),
    ).fetchone()
    if page is None:
        raise WriteBackError(f"write-back: page {slug} not found in source {source_id}")
    title, compiled, timeline, content_hash = page
    # readSummaryBody: a turn that looked like a timeline sentinel split the page in two.
    body = "\n\n".join(part for part in (compiled or "", timeline or "") if part)
    title = title or slug
    spent_before = float(getattr(extractor, "thread_spent_usd", 0.0))
    # Re-extraction restarts row_num at 0; stale rows would otherwise win the
    # (source_id, source_markdown_slug, row_num) conflict and silently keep old facts.
    conn.execute("DELETE FROM facts WHERE source_id = %s AND source_markdown_slug = %s", (source_id, slug))
    segments = split_into_segments(parse_messages(body))
    row_num = inserted = 0
    for segment in segments:
        facts = extractor.extract(segment_input(segment, page_slug=slug, page_title=title, source=source_id))
        if facts:
            inserted += _insert_segment_facts(conn, source_id, slug, segment, facts, row_num)
            row_num += len(facts)
    conn.execute(
        "INSERT INTO facts (source_id, fact, kind, notability, valid_from, source, source_session, row_num,"
        " source_markdown_slug) VALUES (%s, 'EXTRACTION_COMPLETE', 'fact', 'low', %s, %s, %s, %s, %s)"
        " ON CONFLICT (source_id, source_markdown_slug, row_num) DO NOTHING",
        (source_id, now, TERMINAL_AUDIT_SOURCE,
         f"{TERMINAL_AUDIT_SOURCE}:{slug}:page-{content_hash}-{now.date().isoformat()}", row_num, slug),
    )
    cost = float(getattr(extractor, "thread_spent_usd", 0.0)) - spent_before
    receipt = _write_receipt(conn, source_id, now, inserted, cost) if inserted else None
    return ExtractionRun(len(segments), inserted, receipt, cost)


def run_write_back(
    conn: psycopg.Connection, loaded: LoadedFixture, extractor: Extractor, *, now: datetime | None = None
) -> WriteBackScore:
    """Write the fixture's conversation into the (already seeded) brain, extract facts, score them.

    Raises ``WriteBackError`` (a SeedError) when the page is not imported — the
    caller must let it fail the run — and ``BudgetExhaustedError`` from an LLM
    extractor whose run budget is spent.
    """
    fixture = loaded.fixture
    slug = conversation_slug(fixture.fixture_id)
    source = fixture.source
    try:
        content = render_conversation_page(fixture)
        status, detail = import_page(conn, slug, content, source)
    except (MissingTimestampError, psycopg.Error) as exc:
        raise WriteBackError(f"write-back failed for fixture {fixture.fixture_id} at {slug}: {exc}") from exc
    if status != "imported":
        raise WriteBackError(f"write-back failed for fixture {fixture.fixture_id} at {slug}: {status}: {detail}")
    run = extract_conversation_facts(conn, source, slug, extractor, now=now or datetime.now(UTC))
    score = score_write_back(conn, loaded)
    return score.model_copy(update={
        "segments": run.segments,
        "facts_inserted": run.facts_inserted,
        "receipt_slug": run.receipt_slug,
        "cost_usd": run.cost_usd,
    })


__all__ = [
    "ExtractionRun",
    "WriteBackError",
    "extract_conversation_facts",
    "receipt_run_id",
    "receipt_slug",
    "run_write_back",
]
