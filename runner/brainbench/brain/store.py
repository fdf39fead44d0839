"""Reads and writes against one brain database.

Every read takes the source to look in: a seam may only ever see its active
source, so no query here has a "all sources" form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import psycopg

from brainbench.brain.aliases import normalize_alias_list
from brainbench.brain.jsvalue import to_json
from brainbench.brain.markdown import PageParseError, parse_page
from brainbench.jscase import SQL_LOWER_FROM, SQL_LOWER_TO, sql_lower
from brainbench.jsstring import without_lone_surrogates

ImportStatus = Literal["imported", "skipped", "error"]


@dataclass(frozen=True)
class PageRow:
    slug: str
    source_id: str
    type: str
    title: str
    compiled_truth: str
    frontmatter: dict[str, Any]
    content_hash: str


@dataclass(frozen=True)
class FactRow:
    id: int
    source_id: str
    entity_slug: str | None
    fact: str
    kind: str
    source: str
    source_session: str | None
    source_markdown_slug: str | None
    row_num: int | None
    expired_at: Any


_PAGE_COLUMNS = "slug, source_id, type, title, compiled_truth, frontmatter, content_hash"


def sql_lowered(column: str, table_from: str, table_to: str) -> str:
    """gbrain's lower() of ``column``, in SQL: its PGLite database lower-cases as musl does, one
    character to one, which ``translate(column, table_from, table_to)`` with the whole table does in
    any PostgreSQL, so the host's locale never decides a match.  That is ~100 µs a row (1,364 pairs
    scanned per character), so a text that is all ASCII (a test of its characters, whatever the
    database's encoding) is lowered by ``lower()`` under the C collation instead: it maps A-Z to a-z and
    nothing else, which is exactly what the table does to ASCII (a test holds the two equal).  Both
    branches are collation C: equality and LIKE compare the same bytes under any deterministic collation."""
    return (f"(CASE WHEN {column} ~ '^[\\x01-\\x7f]*$' THEN lower({column} COLLATE \"C\")"
            f" ELSE translate({column} COLLATE \"C\", {table_from}, {table_to}) END)")


_LOWER_TITLE = sql_lowered("title", "%(lower_from)s", "%(lower_to)s")
_LOWER_ARGS = {"lower_from": SQL_LOWER_FROM, "lower_to": SQL_LOWER_TO}


def _texts(values: Sequence[str]) -> list[str]:
    # What gbrain's UTF-8 wire makes of a lone surrogate half (TextEncoder: U+FFFD); psycopg would raise.
    return [without_lone_surrogates(v) for v in values]


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def jsonb_problem(frontmatter: dict[str, Any]) -> str | None:
    """Why gbrain's ``frontmatter JSONB`` column would refuse this object, or None.

    JSON.stringify writes a NUL as ``\\u0000`` and a lone surrogate half as ``\\udXXX``;
    jsonb accepts neither (our column is ``json``, which stores both), so gbrain's import
    throws and the fixture fails to seed.
    """
    stack: list[Any] = [to_json(frontmatter)]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\0" in item:
                return "a NUL character (\\u0000)"
            if _LONE_SURROGATE.search(item):
                return "a lone UTF-16 surrogate"
    return None


def _page(row: Sequence[Any]) -> PageRow:
    front = row[5] if isinstance(row[5], dict) else json.loads(row[5] or "{}")
    return PageRow(row[0], row[1], row[2], row[3], row[4], front, row[6])


def connect(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True)


def ensure_sources(conn: psycopg.Connection, source_ids: Sequence[str]) -> None:
    for sid in dict.fromkeys(s for s in source_ids if s and s != "default"):
        conn.execute(
            "INSERT INTO sources (id, name) VALUES (%s, %s) ON CONFLICT (id) DO NOTHING",
            (sid, f"bench source {sid}"),
        )


def import_page(conn: psycopg.Connection, slug: str, content: str, source_id: str) -> tuple[ImportStatus, str]:
    """Import one markdown page the way gbrain's importFromContent does (no embeddings)."""
    try:
        page = parse_page(slug, content)
    except PageParseError as exc:
        status: ImportStatus = "skipped" if "exceeds" in str(exc) else "error"
        return status, str(exc)
    problem = jsonb_problem(page.frontmatter)
    if problem is not None:
        return "error", f"frontmatter cannot be stored: gbrain's jsonb column refuses {problem}"
    with conn.transaction():
        existing = conn.execute(
            "SELECT content_hash FROM pages WHERE source_id = %s AND slug = %s AND deleted_at IS NULL",
            (source_id, slug),
        ).fetchone()
        if existing is not None and existing[0] == page.content_hash:
            return "skipped", "identical content already imported"
        conn.execute(
            "INSERT INTO pages (source_id, slug, type, title, compiled_truth, timeline, frontmatter, tags,"
            " content_hash) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (source_id, slug) DO UPDATE SET type = EXCLUDED.type, title = EXCLUDED.title,"
            " compiled_truth = EXCLUDED.compiled_truth, timeline = EXCLUDED.timeline,"
            " frontmatter = EXCLUDED.frontmatter, tags = EXCLUDED.tags, content_hash = EXCLUDED.content_hash,"
            " deleted_at = NULL, updated_at = now()",
            (source_id, slug, *_texts([page.type, page.title, page.compiled_truth, page.timeline]),
             page.stored_json, _texts(page.tags), page.content_hash),
        )
        register_aliases(conn, source_id, slug, page.frontmatter)
    return "imported", page.content_hash


def register_aliases(conn: psycopg.Connection, source_id: str, slug: str, frontmatter: dict[str, Any]) -> None:
    """Only frontmatter aliases are registered, never the title (spec §2.5)."""
    conn.execute("DELETE FROM page_aliases WHERE source_id = %s AND slug = %s", (source_id, slug))
    aliases = normalize_alias_list(frontmatter.get("aliases"))
    if aliases:
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO page_aliases (source_id, alias_norm, slug) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(source_id, a, slug) for a in _texts(aliases)],
            )


def insert_fact(conn: psycopg.Connection, source_id: str, **values: Any) -> int:
    columns = ["source_id", *values]
    placeholders = ", ".join(["%s"] * len(columns))
    row = conn.execute(
        f"INSERT INTO facts ({', '.join(columns)}) VALUES ({placeholders}) RETURNING id",
        (source_id, *values.values()),
    ).fetchone()
    assert row is not None
    return int(row[0])


# --- reads used by the reflex resolver -------------------------------------------------


def alias_hits(conn: psycopg.Connection, source_id: str, norms: Sequence[str]) -> dict[str, list[str]]:
    """alias_norm → live slugs (pages that exist, not deleted) in ``source_id``."""
    if not norms:
        return {}
    rows = conn.execute(
        "SELECT DISTINCT a.alias_norm, a.slug FROM page_aliases a"
        " JOIN pages p ON p.source_id = a.source_id AND p.slug = a.slug AND p.deleted_at IS NULL"
        " WHERE a.source_id = %s AND a.alias_norm = ANY(%s) ORDER BY a.alias_norm, a.slug",
        (source_id, _texts(norms)),
    ).fetchall()
    out: dict[str, list[str]] = {}
    for norm, slug in rows:
        out.setdefault(norm, []).append(slug)
    return out


def lexical_rows(
    conn: psycopg.Connection,
    source_id: str,
    titles_lc: Sequence[str],
    slugs: Sequence[str],
    slug_suffixes: Sequence[str],
    surname_patterns: Sequence[str],
) -> list[PageRow]:
    """Pages matching by exact title, exact slug, slug suffix, or person surname.

    ORDER BY content_hash is deliberate: gbrain issues this query without an
    ORDER BY and PGLite answers it through an index scan of
    (source_id, content_hash), so its rows arrive in ascending content_hash
    order.  That order decides which pages fit a small pointer budget, so we
    make it explicit (and break the tie by slug, which gbrain leaves to chance).
    """
    rows = conn.execute(
        f"SELECT {_PAGE_COLUMNS} FROM pages WHERE source_id = %(source)s AND deleted_at IS NULL AND ("
        f" {_LOWER_TITLE} = ANY(%(titles)s) OR slug = ANY(%(slugs)s) OR slug LIKE ANY(%(suffixes)s)"
        f" OR (cardinality(%(surnames)s::text[]) > 0 AND type = 'person' AND {_LOWER_TITLE} LIKE ANY(%(surnames)s)))"
        " ORDER BY content_hash, slug",
        {"source": source_id, "titles": _texts(titles_lc), "slugs": _texts(slugs), "suffixes": _texts(slug_suffixes),
         "surnames": _texts(surname_patterns), **_LOWER_ARGS},
    ).fetchall()
    return [_page(r) for r in rows]


def pages_by_slug(conn: psycopg.Connection, source_id: str, slugs: Sequence[str]) -> dict[str, PageRow]:
    if not slugs:
        return {}
    rows = conn.execute(
        f"SELECT {_PAGE_COLUMNS} FROM pages WHERE source_id = %s AND deleted_at IS NULL AND slug = ANY(%s)",
        (source_id, _texts(slugs)),
    ).fetchall()
    return {r[0]: _page(r) for r in rows}


def index_rows(conn: psycopg.Connection, source_id: str, limit: int = 50, *,
               hide_external: bool = False) -> list[tuple[str, str]]:
    # gbrain's PGLite database collates "C" (byte order); a host locale would sort differently
    # and, beyond ``limit`` pages, keep different ones.
    hidden = " AND trust_tier <> 'external_untrusted'" if hide_external else ""
    return [
        (r[0], r[1])
        for r in conn.execute(
            f"SELECT slug, title FROM pages WHERE source_id = %s AND deleted_at IS NULL{hidden}"
            ' ORDER BY slug COLLATE "C" LIMIT %s',
            (source_id, limit),
        ).fetchall()
    ]


# --- reads used by scoring ---------------------------------------------------------------


def facts_for_page(conn: psycopg.Connection, source_id: str, page_slug: str, exclude_source: str) -> list[FactRow]:
    rows = conn.execute(
        "SELECT id, source_id, entity_slug, fact, kind, source, source_session, source_markdown_slug, row_num,"
        " expired_at FROM facts WHERE source_id = %s AND source_markdown_slug = %s AND source <> %s ORDER BY id",
        (source_id, page_slug, exclude_source),
    ).fetchall()
    return [FactRow(*r) for r in rows]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def fact_keyword_probe(conn: psycopg.Connection, source_id: str, keywords: Sequence[str]) -> bool:
    """True when one live fact in the source contains every keyword (gbrain's ILIKE: PGLite's case table)."""
    if not keywords:
        return False
    # PostgreSQL's ILIKE on UTF-8 is lower(text) LIKE lower(pattern); both lowered with gbrain's table.
    clauses = " AND ".join([f"{sql_lowered('fact', '%s', '%s')} LIKE %s"] * len(keywords))
    params: list[str] = []
    for k in _texts(keywords):
        params += [SQL_LOWER_FROM, SQL_LOWER_TO, sql_lower(f"%{_escape_like(k)}%")]
    row = conn.execute(
        f"SELECT 1 FROM facts WHERE source_id = %s AND expired_at IS NULL AND {clauses} LIMIT 1",
        (source_id, *params),
    ).fetchone()
    return row is not None
