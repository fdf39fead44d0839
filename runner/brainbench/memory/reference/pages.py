"""Page writes of the reference memory system: agents' pages, a connector's items, the owner's files.

Every write goes through :func:`write_page`: parse, judge (write gate), then inside one writer
transaction snapshot the old state (``page_versions``), upsert the page (the tier trigger stamps
it), register its aliases, rebuild its chunks (none while quarantined) and write the receipt.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from brainbench.brain.markdown import ParsedPage, parse_page
from brainbench.brain.store import register_aliases
from brainbench.memory.reference import gate
from brainbench.memory.reference.context import Store
from brainbench.memory.reference.fence import strip_fences
from brainbench.memory.reference.stamping import writer
from brainbench.models.trust import TrustTier, stored_tier

CHUNK_CHARS = 1200
QUARANTINE_KEY = "quarantine"


@dataclass(frozen=True)
class PageWrite:
    page_id: int
    source: str
    slug: str
    tier: TrustTier
    decision: gate.Decision
    receipt_ref: str | None

    @property
    def quarantined(self) -> bool:
        return self.decision.verdict == "quarantine"


def _string_leaves(value: Any, skip: Iterable[str] = ()) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() if k not in skip for s in _string_leaves(v)]
    if isinstance(value, list):
        return [s for v in value for s in _string_leaves(v)]
    return []


def gated_texts(page: ParsedPage) -> list[str]:
    """What the gate reads of a page: title, body without fence rows, frontmatter strings."""
    return [page.title, strip_fences(page.compiled_truth), strip_fences(page.timeline),
            *_string_leaves(page.frontmatter, skip=(QUARANTINE_KEY,))]


def chunk_texts(title: str, compiled: str, timeline: str) -> list[str]:
    """The page in paragraph-aligned pieces of at most ~CHUNK_CHARS, the title leading the first."""
    paragraphs = [p.strip() for p in f"{compiled}\n\n{timeline}".split("\n\n") if p.strip()]
    chunks: list[str] = []
    current = title
    for paragraph in paragraphs:
        if current and len(current) + len(paragraph) + 2 > CHUNK_CHARS:
            chunks.append(current)
            current = paragraph
        else:
            current = f"{current}\n\n{paragraph}" if current else paragraph
    if current:
        chunks.append(current)
    return chunks


def rebuild_chunks(store: Store, page_id: int) -> int:
    """Replace the page's chunks with its current text (none when deleted or quarantined)."""
    store.conn.execute("DELETE FROM content_chunks WHERE page_id = %s", (page_id,))
    row = store.conn.execute(
        "SELECT source_id, title, compiled_truth, timeline, trust_tier FROM pages WHERE id = %s AND deleted_at IS NULL"
        " AND NOT (frontmatter::jsonb ? 'quarantine')", (page_id,)).fetchone()
    if row is None:
        return 0
    source, title, compiled, timeline, tier = row
    chunks = chunk_texts(title, compiled, timeline)
    with store.conn.cursor() as cur:
        cur.executemany(
            "INSERT INTO content_chunks (page_id, source_id, chunk_index, chunk_text, trust_tier)"
            " VALUES (%s, %s, %s, %s, %s)", [(page_id, source, i, text, tier) for i, text in enumerate(chunks)])
    return len(chunks)


def snapshot(store: Store, source: str, slug: str) -> None:
    """Keep the page's current state as a version before it is rewritten."""
    store.conn.execute(
        "INSERT INTO page_versions (page_id, source_id, slug, title, compiled_truth, timeline, frontmatter, trust_tier,"
        " write_origin) SELECT id, source_id, slug, title, compiled_truth, timeline, frontmatter, trust_tier,"
        " write_origin FROM pages WHERE source_id = %s AND slug = %s", (source, slug))


def upsert(store: Store, source: str, page: ParsedPage, frontmatter: Mapping[str, Any]) -> tuple[int, TrustTier]:
    snapshot(store, source, page.slug)
    row = store.conn.execute(
        "INSERT INTO pages (source_id, slug, type, title, compiled_truth, timeline, frontmatter, tags, content_hash)"
        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
        " ON CONFLICT (source_id, slug) DO UPDATE SET type = EXCLUDED.type, title = EXCLUDED.title,"
        " compiled_truth = EXCLUDED.compiled_truth, timeline = EXCLUDED.timeline, frontmatter = EXCLUDED.frontmatter,"
        " tags = EXCLUDED.tags, content_hash = EXCLUDED.content_hash, deleted_at = NULL, updated_at = now()"
        " RETURNING id, trust_tier",
        (source, page.slug, page.type, page.title, page.compiled_truth, page.timeline,
         json.dumps(dict(frontmatter), ensure_ascii=False), page.tags, page.content_hash)).fetchone()
    assert row is not None
    register_aliases(store.conn, source, page.slug, dict(frontmatter))
    return int(row[0]), stored_tier(row[1])


def write_page(store: Store, source: str, page: ParsedPage, *, tier: TrustTier, origin: Mapping[str, Any],
               op: str, actor: str, request: Mapping[str, Any]) -> PageWrite:
    """Gate and store one page written by ``tier``'s writer.  A rejected write stores nothing."""
    decision = gate.judge(store, tier, gated_texts(page))
    if decision.verdict == "reject":
        return PageWrite(0, source, page.slug, tier, decision, None)
    frontmatter = dict(page.frontmatter)
    if decision.verdict == "quarantine":
        frontmatter[QUARANTINE_KEY] = {"verdict": "quarantine", "reason_families": decision.families}
    else:
        frontmatter.pop(QUARANTINE_KEY, None)  # only the gate sets it: a write cannot hide itself
    with writer(store.conn, tier, origin):
        store.journal(op, actor, request)
        page_id, stored = upsert(store, source, page, frontmatter)
        rebuild_chunks(store, page_id)
        receipt = None
        if decision.verdict in ("flag", "quarantine"):
            receipt = gate.record(store, "pages", page_id, stored, decision, page.content_hash)
    return PageWrite(page_id, source, page.slug, stored, decision, receipt)


def parse(slug: str, content: str) -> ParsedPage:
    return parse_page(slug, content)
