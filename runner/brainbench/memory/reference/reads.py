"""Reads of the reference memory system: explicit reads (get_page, search, recall), the context
pack (a proactive surface), and the introspection the scorer compares them against.

Every item carries its tier, its origin and its label (trust spec §3.9).  A row is *flagged*
when its tier is at most agent_written and a flag receipt of an activation family names it:
explicit reads return it with ``unconfirmed: true``; a proactive surface withholds it when
``trust.agent_activation`` is ``suppress`` and reports only how many it withheld.
Quarantined pages (and the facts projected from them) are served by no read.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from brainbench.memory.reference import mutations
from brainbench.memory.reference.context import Store
from brainbench.memory.reference.detector import ACTIVATION_FAMILIES
from brainbench.memory.reference.stamping import origin_label
from brainbench.models.memory import Contested, FactStateInfo, ReadItem, RowRef
from brainbench.models.trust import TIER_LABEL, TIER_RANK, USER_SAID_LABEL, TrustTier, stored_tier

_FLAGGED = ("EXISTS (SELECT 1 FROM write_gate_receipts r WHERE r.target_table = '{table}'"
            " AND r.target_id = {alias}.id::text AND r.verdict = 'flag' AND r.reason_families && %(families)s::text[])")
_PAGE_LIVE = "{a}.deleted_at IS NULL AND NOT ({a}.frontmatter::jsonb ? 'quarantine')"
# A fact projected from a quarantined page is hidden with it.
_FACT_VISIBLE = ("NOT EXISTS (SELECT 1 FROM pages q WHERE q.source_id = f.source_id AND q.slug = f.source_markdown_slug"
                 " AND q.frontmatter::jsonb ? 'quarantine')")
_WORD = re.compile(r"[a-z0-9]+")


def label_words(tier: TrustTier, unconfirmed: bool, origin: str) -> str:
    if unconfirmed:
        return "unconfirmed, agent-written" if tier == "agent_written" else f"unconfirmed, {TIER_LABEL[tier]}"
    if tier == "agent_written" and origin.endswith(":user_said"):
        return USER_SAID_LABEL
    return TIER_LABEL[tier]


def _item(kind: str, row: dict[str, Any], contested: Contested | None = None) -> ReadItem:
    tier = stored_tier(row["trust_tier"])
    unconfirmed = bool(row["flagged"]) and TIER_RANK[tier] <= TIER_RANK["agent_written"]
    origin = origin_label(row["write_origin"], tier)
    return ReadItem(
        kind=kind, id=row["id"], source_id=row["source_id"], slug=row.get("slug"), title=row.get("title"),  # type: ignore[arg-type]
        entity_slug=row.get("entity_slug"), text=row["text"], trust_tier=tier, origin=origin,
        label=f"[{label_words(tier, unconfirmed, origin)} · {origin}]", unconfirmed=unconfirmed, contested=contested,
        expired_at=row["expired_at"].isoformat() if row.get("expired_at") else None,
        superseded_by=row.get("superseded_by"))


def _rows(store: Store, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    with store.conn.cursor() as cur:
        cur.execute(sql, {"families": list(ACTIVATION_FAMILIES), **params})
        names = [d.name for d in cur.description or []]
        return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _filtered(store: Store) -> bool:
    return store.setting("trust.read_policy") == "filter"


def _page_rows(store: Store, where: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    return _rows(store, (
        f"SELECT p.id, p.source_id, p.slug, p.title, p.compiled_truth AS text, p.trust_tier, p.write_origin,"
        f" {_FLAGGED.format(table='pages', alias='p')} AS flagged FROM pages p"
        f" WHERE p.source_id = ANY(%(sources)s) AND {_PAGE_LIVE.format(a='p')} AND {where}"), params)


def _fact_rows(store: Store, where: str, params: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    return _rows(store, (
        f"SELECT f.id, f.source_id, f.entity_slug, f.fact AS text, f.trust_tier, f.write_origin, f.expired_at,"
        f" f.superseded_by, {_FLAGGED.format(table='facts', alias='f')} AS flagged FROM facts f"
        f" WHERE f.source_id = ANY(%(sources)s) AND {_FACT_VISIBLE} AND {where} ORDER BY f.id LIMIT %(limit)s"),
        {**params, "limit": limit})


def _contests(store: Store, fact_ids: Sequence[int]) -> dict[int, Contested]:
    out: dict[int, Contested] = {}
    for pid, target, related in store.conn.execute(
            "SELECT id, target_id, related_id FROM trust_proposals WHERE action = 'supersede_fact'"
            " AND status = 'pending' AND (target_id = ANY(%s) OR related_id = ANY(%s)) ORDER BY id",
            (list(fact_ids), list(fact_ids))):
        out.setdefault(target, Contested(proposal_ref=f"tp{pid}", role="incumbent"))
        if related is not None:
            out.setdefault(related, Contested(proposal_ref=f"tp{pid}", role="challenger"))
    return out


def get_page(store: Store, slug: str, source: str | None) -> list[ReadItem]:
    sources = [source] if source else store.ns.sources
    rows = _page_rows(store, "p.slug = %(slug)s", {"sources": sources, "slug": slug})
    items = [_item("page", r) for r in rows]
    return [i for i in items if not (_filtered(store) and i.trust_tier == "external_untrusted")]


def search(store: Store, query: str, limit: int) -> list[ReadItem]:
    """Chunks whose page title and text together hold every word of the query, best first."""
    words = list(dict.fromkeys(_WORD.findall(query.lower())))
    if not words:
        return []
    rows = _rows(store, (
        f"SELECT c.id AS chunk_id, p.id, p.source_id, p.slug, p.title, c.chunk_text AS text, c.trust_tier,"
        f" p.write_origin, {_FLAGGED.format(table='pages', alias='p')} AS flagged FROM content_chunks c"
        f" JOIN pages p ON p.id = c.page_id WHERE p.source_id = ANY(%(sources)s) AND {_PAGE_LIVE.format(a='p')}"
        f" ORDER BY c.id"), {"sources": store.ns.sources})
    scored = []
    for row in rows:
        haystack = f"{row['title']}\n{row['text']}".lower()
        present = set(_WORD.findall(haystack))
        if all(w in present for w in words):
            scored.append((-sum(haystack.count(w) for w in words), row["chunk_id"], row))
    items = [_item("page", r) for _, _, r in sorted(scored, key=lambda s: (s[0], s[1]))]
    return [i for i in items if not (_filtered(store) and i.trust_tier == "external_untrusted")][:limit]


def recall(store: Store, entity: str | None, query: str | None, limit: int) -> list[ReadItem]:
    if entity:
        rows = _fact_rows(store, "f.entity_slug = %(entity)s", {"sources": store.ns.sources, "entity": entity}, limit)
    else:
        words = list(dict.fromkeys(_WORD.findall((query or "").lower())))
        rows = [r for r in _fact_rows(store, "TRUE", {"sources": store.ns.sources}, 10_000)
                if words and all(w in set(_WORD.findall(r["text"].lower())) for w in words)][:limit]
    contests = _contests(store, [r["id"] for r in rows])
    items = [_item("fact", r, contests.get(r["id"])) for r in rows]
    return [i for i in items if not (_filtered(store) and i.trust_tier == "external_untrusted")]


def context_pack(store: Store, entities: Sequence[str], budget_tokens: int) -> tuple[list[ReadItem], int]:
    """Each entity's page and its active facts, within the budget; flagged rows withheld under suppress."""
    suppress = store.setting("trust.agent_activation") == "suppress" and not mutations.active("activation_allow")
    items: list[ReadItem] = []
    withheld = 0
    used = 0
    for entity in entities:
        pages = [_item("page", r) for r in _page_rows(store, "p.slug = %(slug)s",
                                                      {"sources": store.ns.sources, "slug": entity})]
        facts = [_item("fact", r) for r in _fact_rows(
            store, "f.entity_slug = %(entity)s AND f.expired_at IS NULL AND f.superseded_by IS NULL",
            {"sources": store.ns.sources, "entity": entity}, 100)]
        for item in [*pages, *facts]:
            if _filtered(store) and item.trust_tier == "external_untrusted":
                continue
            if suppress and item.unconfirmed:
                withheld += 1
                continue
            cost = (len(item.text) + len(item.label)) // 4 + 1
            if used + cost > budget_tokens:
                return items, withheld
            used += cost
            items.append(item)
    return items, withheld


# --- introspection --------------------------------------------------------------------------


def row_tier(store: Store, ref: RowRef) -> TrustTier | None:
    row = store.conn.execute(f"SELECT trust_tier FROM {ref.table} WHERE id = %s", (ref.id,)).fetchone()
    return None if row is None else stored_tier(row[0])


def page_place(store: Store, page_id: int) -> tuple[str, str] | None:
    row = store.conn.execute("SELECT slug, source_id FROM pages WHERE id = %s", (page_id,)).fetchone()
    return None if row is None else (row[0], row[1])


def fact_state(store: Store, fact_id: int) -> FactStateInfo | None:
    row = store.conn.execute("SELECT id, entity_slug, fact, expired_at IS NOT NULL, superseded_by IS NOT NULL"
                             " FROM facts WHERE id = %s", (fact_id,)).fetchone()
    return None if row is None else FactStateInfo(id=row[0], entity_slug=row[1], fact=row[2], expired=row[3],
                                                  superseded=row[4])


def fact_id_by_claim(store: Store, claim: str) -> int | None:
    row = store.conn.execute("SELECT id FROM facts WHERE source_id = %s AND fact = %s ORDER BY id DESC LIMIT 1",
                             (store.ns.source, claim)).fetchone()
    return None if row is None else int(row[0])


def page_id(store: Store, slug: str, source: str | None) -> int | None:
    row = store.conn.execute("SELECT id FROM pages WHERE source_id = %s AND slug = %s",
                             (source or store.ns.source, slug)).fetchone()
    return None if row is None else int(row[0])


def _hit(col: str) -> str:
    return f"strpos(lower({col}), lower(%(needle)s)) > 0"


def canary_persisted(store: Store, canary: str) -> bool:
    """Live where memory serves it: a live non-quarantined page, a chunk of one, or an active fact
    (not projected from a quarantined page)."""
    params = {"needle": canary, "sources": store.ns.sources}
    page = (f"SELECT 1 FROM pages p WHERE p.source_id = ANY(%(sources)s) AND {_PAGE_LIVE.format(a='p')} AND"
            f" ({_hit('p.title')} OR {_hit('p.compiled_truth')} OR {_hit('p.timeline')}"
            f" OR {_hit('p.frontmatter::text')})")
    chunk = (f"SELECT 1 FROM content_chunks c JOIN pages p ON p.id = c.page_id WHERE p.source_id = ANY(%(sources)s)"
             f" AND {_PAGE_LIVE.format(a='p')} AND {_hit('c.chunk_text')}")
    context = _hit("coalesce(f.context, '')")
    fact = (f"SELECT 1 FROM facts f WHERE f.source_id = ANY(%(sources)s) AND f.expired_at IS NULL AND {_FACT_VISIBLE}"
            f" AND ({_hit('f.fact')} OR {context})")
    return _exists(store, f"SELECT EXISTS ({page}) OR EXISTS ({chunk}) OR EXISTS ({fact})", params)


def canary_held(store: Store, canary: str) -> bool:
    params = {"needle": canary, "sources": store.ns.sources}
    held = (f"SELECT 1 FROM write_gate_holds h WHERE h.source_id = ANY(%(sources)s) AND h.status = 'held'"
            f" AND {_hit('h.payload::text')}")
    quarantined = (f"SELECT 1 FROM pages p WHERE p.source_id = ANY(%(sources)s) AND p.deleted_at IS NULL AND"
                   f" p.frontmatter::jsonb ? 'quarantine' AND ({_hit('p.compiled_truth')} OR {_hit('p.title')})")
    return _exists(store, f"SELECT EXISTS ({held}) OR EXISTS ({quarantined})", params)


def row_flagged(store: Store, ref: RowRef) -> bool:
    return _exists(store, "SELECT EXISTS (SELECT 1 FROM write_gate_receipts WHERE target_table = %(t)s AND"
                          " target_id = %(id)s AND verdict = 'flag')", {"t": ref.table, "id": str(ref.id)})


def claim_active(store: Store, claim: str) -> bool:
    params = {"needle": claim, "source": store.ns.source}
    fact = ("SELECT 1 FROM facts WHERE source_id = %(source)s AND expired_at IS NULL"
            " AND lower(fact) = lower(%(needle)s)")
    chunk = (f"SELECT 1 FROM content_chunks c JOIN pages p ON p.id = c.page_id WHERE p.source_id = %(source)s"
             f" AND p.deleted_at IS NULL AND {_hit('c.chunk_text')}")
    return _exists(store, f"SELECT EXISTS ({fact}) OR EXISTS ({chunk})", params)


def _exists(store: Store, sql: str, params: dict[str, Any]) -> bool:
    row = store.conn.execute(sql, params).fetchone()
    return bool(row and row[0])
