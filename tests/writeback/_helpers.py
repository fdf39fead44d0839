"""Plain helpers for the write-back tests: reference data and hand-built fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import psycopg
from brainbench.corpus.loader import LoadedFixture
from brainbench.models.corpus import Fixture, Gold

REPO = Path(__file__).resolve().parents[2]
# The published reference lives next to the repo, in the dev workspace and in CI.
REFERENCE = REPO / "tests" / "data" / "reference"


def make_loaded(fixture: dict[str, Any], gold: dict[str, Any]) -> LoadedFixture:
    fixture = {"schema_version": 1, **fixture}
    return LoadedFixture(
        Fixture.model_validate(fixture),
        Gold.model_validate({"fixture_id": fixture["fixture_id"], **gold}),
        Path(f"{fixture['fixture_id']}.fixture.json"),
        Path(f"{fixture['fixture_id']}.gold.json"),
    )


def reference_brain(fixture_id: str) -> dict[str, Any]:
    doc = json.loads((REFERENCE / "turns" / "gbrain-seeded-brains-handauthored.json").read_text())
    return next(item for item in doc if item["fixture_id"] == fixture_id)


FACT_COLUMNS = (
    "id", "source_id", "entity_slug", "fact", "kind", "visibility", "notability", "context", "source",
    "source_session", "source_markdown_slug", "row_num", "confidence", "valid_from", "expired_at",
)


def fact_rows(conn: psycopg.Connection, source_id: str = "default") -> list[dict[str, Any]]:
    """Facts as gbrain's reference dump shows them (timestamps as Postgres text in UTC)."""
    conn.execute("SET TIME ZONE 'UTC'")
    cols = ", ".join(f"{c}::text" if c in ("valid_from", "expired_at") else c for c in FACT_COLUMNS)
    rows = conn.execute(f"SELECT {cols} FROM facts WHERE source_id = %s ORDER BY id", (source_id,)).fetchall()
    return [dict(zip(FACT_COLUMNS, r, strict=True)) for r in rows]


def page_row(conn: psycopg.Connection, slug: str, source_id: str = "default") -> dict[str, Any] | None:
    row = conn.execute(
        "SELECT source_id, slug, type, title, frontmatter, compiled_truth, content_hash FROM pages"
        " WHERE source_id = %s AND slug = %s",
        (source_id, slug),
    ).fetchone()
    if row is None:
        return None
    keys = ("source_id", "slug", "type", "title", "frontmatter", "compiled_truth", "content_hash")
    return dict(zip(keys, row, strict=True))
