"""What a proactive surface may inject, and how each row is labeled (gbrain 0.60; trust spec §3.5).

The memory system writes trust tiers, origins, write-gate receipts, quarantine markers
and the brain's trust settings (migrations 002, 003); the seams only read them, here:

* ``trust.read_policy``: ``label`` (default) labels every row; ``filter`` also hides
  external, untrusted rows.
* ``trust.agent_activation``: ``allow`` (default) injects a flagged row with the
  "unconfirmed, agent-written" label; ``suppress`` withholds it and only counts it.
* A row is *flagged* when its tier is at most agent_written and a write-gate receipt
  with verdict ``flag`` names it with an activation family.
* A quarantined page (a ``quarantine`` key in its frontmatter) keeps its pointer (it is
  external text: wrapped as data), but the facts projected from it are never injected.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import psycopg

ACTIVATION_FAMILIES = ("standing_instruction", "override", "exfiltration", "credential")
# Tiers at or below agent_written: the ones activation control applies to.
_ACTIVATION_TIERS_SQL = "('agent_written', 'unknown', 'external_untrusted')"
_SETTINGS = ("trust.read_policy", "trust.agent_activation")
HOT_FACTS_FETCH = 30


@dataclass(frozen=True)
class ReadPolicy:
    """The brain's settings for proactive reads; unset or unknown values read as the defaults."""

    hide_external: bool = False  # trust.read_policy = filter
    suppress_flagged: bool = False  # trust.agent_activation = suppress


@dataclass(frozen=True)
class RowTrust:
    tier: str
    write_origin: Any
    flagged: bool


def _flagged_sql(table: str, alias: str) -> str:
    # Constants only: ``table`` and ``alias`` come from this module.
    return (f"({alias}.trust_tier IN {_ACTIVATION_TIERS_SQL} AND EXISTS (SELECT 1 FROM write_gate_receipts r"
            f" WHERE r.target_table = '{table}' AND r.target_id = {alias}.id::text AND r.verdict = 'flag'"
            f" AND r.reason_families && %(families)s::text[]))")


def read_policy(conn: psycopg.Connection) -> ReadPolicy:
    rows = dict(conn.execute("SELECT key, value FROM config WHERE key = ANY(%s)", (list(_SETTINGS),)).fetchall())

    def value(key: str) -> str:
        # The memory system may store a JSON string; the setting is the same word either way.
        return str(rows.get(key) or "").strip().strip('"').strip().lower()

    return ReadPolicy(hide_external=value("trust.read_policy") == "filter",
                      suppress_flagged=value("trust.agent_activation") == "suppress")


def page_trust(conn: psycopg.Connection, source_id: str, slugs: Sequence[str]) -> dict[str, RowTrust]:
    """Tier, origin and flag of the live pages ``slugs`` of ``source_id``."""
    if not slugs:
        return {}
    rows = conn.execute(
        "SELECT p.slug, p.trust_tier, p.write_origin, " + _flagged_sql("pages", "p") +
        " FROM pages p WHERE p.source_id = %(source)s AND p.deleted_at IS NULL AND p.slug = ANY(%(slugs)s)",
        {"source": source_id, "slugs": list(slugs), "families": list(ACTIVATION_FAMILIES)},
    ).fetchall()
    return {r[0]: RowTrust(r[1], r[2], bool(r[3])) for r in rows}


@dataclass(frozen=True)
class HotFact:
    id: int
    fact: str
    entity_slug: str | None
    confidence: float
    trust: RowTrust


def hot_facts(conn: psycopg.Connection, source_id: str, session_id: str | None,
              policy: ReadPolicy) -> list[HotFact]:
    """Active, world-visible facts of the session (else of the last 24 hours) in the source, newest
    first: hot memory's candidates.  Facts projected from a quarantined page never come back."""
    where = ["f.source_id = %(source)s", "f.expired_at IS NULL", "f.visibility = 'world'",
             "NOT EXISTS (SELECT 1 FROM pages q WHERE q.source_id = f.source_id AND q.slug = f.source_markdown_slug"
             " AND q.deleted_at IS NULL AND COALESCE(q.frontmatter::jsonb ? 'quarantine', false))"]
    if policy.hide_external:
        where.append("f.trust_tier <> 'external_untrusted'")
    base = ("SELECT f.id, f.fact, f.entity_slug, f.confidence, f.trust_tier, f.write_origin, "
            + _flagged_sql("facts", "f") + " FROM facts f WHERE " + " AND ".join(where))
    params: dict[str, Any] = {"source": source_id, "families": list(ACTIVATION_FAMILIES),
                              "session": session_id, "limit": HOT_FACTS_FETCH}
    order = " ORDER BY f.created_at DESC, f.id DESC LIMIT %(limit)s"
    rows: list[Any] = []
    if session_id:
        rows = conn.execute(base + " AND f.source_session = %(session)s" + order, params).fetchall()
    if not rows:
        rows = conn.execute(base + " AND f.created_at > now() - interval '24 hours'" + order, params).fetchall()
    return [HotFact(int(r[0]), r[1], r[2], float(r[3]), RowTrust(r[4], r[5], bool(r[6]))) for r in rows]
