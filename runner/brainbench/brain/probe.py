"""The runner's own scan of a brain database for a piece of text (trust spec §2.6).

Independent of the memory system under test: every text-bearing column of every base table in
the public schema is searched (case-insensitive), not only the tables the system says hold
memory.  A table whose query fails (a column that will not cast to text) is skipped, as in
gbrain's probe.  Used before and after a purge, so what a purge missed shows up whatever its
receipt claims.
"""

from __future__ import annotations

import psycopg
from psycopg import sql

_TEXT_TYPES = ("text", "character varying", "json", "jsonb", "ARRAY", "USER-DEFINED")


def text_columns(conn: psycopg.Connection) -> dict[str, list[str]]:
    rows = conn.execute(
        "SELECT c.table_name, c.column_name FROM information_schema.columns c"
        " JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name"
        " WHERE c.table_schema = 'public' AND t.table_type = 'BASE TABLE' AND c.data_type = ANY(%s)"
        " ORDER BY c.table_name, c.column_name", (list(_TEXT_TYPES),)).fetchall()
    out: dict[str, list[str]] = {}
    for table, column in rows:
        out.setdefault(table, []).append(column)
    return out


def probe_stores(conn: psycopg.Connection, needle: str) -> dict[str, int]:
    """table → rows with ``needle`` in any text column, for every table that has some."""
    hits: dict[str, int] = {}
    for table, columns in text_columns(conn).items():
        where = sql.SQL(" OR ").join(
            sql.SQL("strpos(lower({}::text), lower(%s)) > 0").format(sql.Identifier(c)) for c in columns)
        query = sql.SQL("SELECT count(*) FROM {} WHERE ").format(sql.Identifier(table)) + where
        try:
            with conn.transaction():
                row = conn.execute(query, [needle] * len(columns)).fetchone()
        except psycopg.Error:
            continue
        if row and row[0]:
            hits[table] = int(row[0])
    return hits


def page_slugs(conn: psycopg.Connection, source: str) -> set[str]:
    """Every page slug of ``source`` (quarantined and deleted ones too: they are that source's pages)."""
    return {r[0] for r in conn.execute("SELECT slug FROM pages WHERE source_id = %s", (source,))}
