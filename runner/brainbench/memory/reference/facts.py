"""Fact writes: remember (with guarded supersession), forget (guarded for agents), the owner's fence rows.

A correction (``replaces``) by a writer at least as trusted as the fact it replaces supersedes
it: the old row stays as history, expired and pointing at its successor.  A less trusted
writer cannot: its fact is stored active and contested, the old one untouched, and a
``supersede_fact`` proposal waits for the owner (trust spec §3.7).  An agent may forget only
what agents wrote; above that it files a ``forget`` proposal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from brainbench.memory.reference import gate, mutations
from brainbench.memory.reference.context import Store
from brainbench.memory.reference.fence import FenceRow, fingerprint
from brainbench.memory.reference.stamping import writer
from brainbench.models.memory import Contested
from brainbench.models.trust import TIER_RANK, TrustTier, stored_tier

# Facts an agent remembers are visible to the whole brain (gbrain's trust fixtures' facts are).
AGENT_VISIBILITY = "world"


@dataclass(frozen=True)
class StoredFact:
    id: int
    source_id: str
    entity_slug: str | None
    fact: str
    tier: TrustTier
    visibility: str
    expired: bool
    superseded_by: int | None


def load(store: Store, fact_id: int) -> StoredFact | None:
    row = store.conn.execute(
        "SELECT id, source_id, entity_slug, fact, trust_tier, visibility, expired_at IS NOT NULL, superseded_by"
        " FROM facts WHERE id = %s AND source_id = ANY(%s)", (fact_id, store.ns.sources)).fetchone()
    if row is None:
        return None
    return StoredFact(row[0], row[1], row[2], row[3], stored_tier(row[4]), row[5], row[6], row[7])


def tombstoned(store: Store, visibility: str, subject: str | None, claim: str) -> bool:
    row = store.conn.execute(
        "SELECT 1 FROM fact_purges WHERE source_id = %s AND visibility = %s AND subject IS NOT DISTINCT FROM %s"
        " AND fact_hash = %s LIMIT 1", (store.ns.source, visibility, subject, fingerprint(claim))).fetchone()
    return row is not None


def insert(store: Store, *, fact: str, entity: str | None, kind: str, source: str, visibility: str,
           source_markdown_slug: str | None = None, row_num: int | None = None, context: str | None = None,
           confidence: float = 1.0) -> tuple[int, TrustTier]:
    row = store.conn.execute(
        "INSERT INTO facts (source_id, entity_slug, fact, kind, visibility, source, confidence, source_markdown_slug,"
        " row_num, context, fingerprint, valid_from) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, now())"
        " RETURNING id, trust_tier",
        (store.ns.source, entity, fact, kind, visibility, source, confidence, source_markdown_slug, row_num, context,
         fingerprint(fact))).fetchone()
    assert row is not None
    return int(row[0]), stored_tier(row[1])


@dataclass(frozen=True)
class Remembered:
    fact_id: int | None
    tier: TrustTier
    decision: gate.Decision
    receipt_ref: str | None = None
    status: str = "created"
    contested: Contested | None = None


def remember(store: Store, *, fact: str, entity: str | None, kind: str, tier: TrustTier, origin: Mapping[str, Any],
             replaces: StoredFact | None, actor: str, request: Mapping[str, Any]) -> Remembered:
    decision = gate.judge(store, tier, [fact])
    if decision.verdict == "reject":
        return Remembered(None, tier, decision, status="rejected")
    if decision.verdict == "quarantine":
        # A fact is never stored quarantined: it is held for review, outside the facts table.
        payload = {"fact": fact, "entity_slug": entity, "kind": kind, "visibility": AGENT_VISIBILITY,
                   "trust_tier": tier, "write_origin": dict(origin)}
        with store.conn.transaction():
            store.journal("remember", actor, request)
            store.conn.execute(
                "INSERT INTO write_gate_holds (source_id, target_table, payload, reason_families)"
                " VALUES (%s, 'facts', %s, %s)", (store.ns.source, json.dumps(payload), decision.families))
        return Remembered(None, tier, decision, status="held")
    with writer(store.conn, tier, origin):
        store.journal("remember", actor, request)
        fact_id, stored = insert(store, fact=fact, entity=entity, kind=kind, source="bench",
                                 visibility=AGENT_VISIBILITY)
        receipt = gate.record(store, "facts", fact_id, stored, decision, gate.content_hash(fact)) \
            if decision.verdict == "flag" else None
        status, contested = "created", None
        if replaces is not None and not mutations.active("ignore_replaces"):
            guarded = TIER_RANK[stored] < TIER_RANK[replaces.tier] and not mutations.active("lower_tier_supersedes")
            if guarded:
                proposal = _propose(store, "supersede_fact", replaces.id, fact_id, {
                    "guard": "lower_tier_supersede", "old": {"id": replaces.id, "tier": replaces.tier},
                    "new": {"id": fact_id, "tier": stored}})
                status, contested = "contested", Contested(proposal_ref=proposal, role="challenger")
            else:
                store.conn.execute(
                    "UPDATE facts SET expired_at = now(), valid_until = now(), superseded_by = %s WHERE id = %s",
                    (fact_id, replaces.id))
                status = "superseded"
    return Remembered(fact_id, stored, decision, receipt, status, contested)


def _propose(store: Store, action: str, target: int, related: int | None, before: Mapping[str, Any]) -> str:
    row = store.conn.execute(
        "INSERT INTO trust_proposals (source_id, action, target_id, related_id, before_state)"
        " VALUES (%s, %s, %s, %s, %s) RETURNING id",
        (store.ns.source, action, target, related, json.dumps(dict(before)))).fetchone()
    assert row is not None
    return f"tp{row[0]}"


def forget(store: Store, target: StoredFact, *, tier: TrustTier, origin: Mapping[str, Any], actor: str,
           request: Mapping[str, Any]) -> tuple[bool, str]:
    """Expire ``target`` if this writer may; otherwise file a proposal.  Returns (expired, proposal or status)."""
    if TIER_RANK[target.tier] > TIER_RANK["agent_written"] and not mutations.active("remote_forget_unguarded"):
        with store.conn.transaction():
            store.journal("forget", actor, request)
            ref = _propose(store, "forget", target.id, None, {"old": {"id": target.id, "tier": target.tier}})
        return False, ref
    with writer(store.conn, tier, origin):
        store.journal("forget", actor, request)
        store.conn.execute("UPDATE facts SET expired_at = now(), valid_until = now() WHERE id = %s AND"
                           " expired_at IS NULL", (target.id,))
    return True, "forgotten"


def project_fence(store: Store, slug: str, rows: list[FenceRow]) -> int:
    """The owner page's fence rows as facts (inside the owner's writer transaction); rows no longer in the
    fence are expired.  Tombstoned claims never come back.  Returns the rows projected."""
    live = {r.row_num for r in rows}
    projected = 0
    for r in rows:
        if tombstoned(store, r.visibility, slug, r.claim):
            continue
        existing = store.conn.execute(
            "SELECT id, fact FROM facts WHERE source_id = %s AND source_markdown_slug = %s AND row_num = %s",
            (store.ns.source, slug, r.row_num)).fetchone()
        if existing is None:
            insert(store, fact=r.claim, entity=slug, kind=r.kind, source="owner", visibility=r.visibility,
                   source_markdown_slug=slug, row_num=r.row_num, context=r.context, confidence=r.confidence)
        elif existing[1] != r.claim:
            store.conn.execute(
                "UPDATE facts SET fact = %s, kind = %s, visibility = %s, context = %s, fingerprint = %s,"
                " expired_at = NULL, superseded_by = NULL WHERE id = %s",
                (r.claim, r.kind, r.visibility, r.context, fingerprint(r.claim), existing[0]))
        projected += 1
    store.conn.execute(
        "UPDATE facts SET expired_at = now(), valid_until = now() WHERE source_id = %s AND source_markdown_slug = %s"
        " AND expired_at IS NULL AND NOT (row_num = ANY(%s))", (store.ns.source, slug, sorted(live)))
    return projected
