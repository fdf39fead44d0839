"""Purge: remove a claim from every store that holds it, leave a text-free tombstone, report each store.

Two phases (trust spec §3.8).  The dry run finds the claim's scope — every fact of the source
with the same fingerprint, subject and visibility — and every store that carries it, and
returns what it would remove with a confirm token (the fingerprint's first 8 hex) and the
scope's revision.  The real run needs both back, so a purge never deletes a scope its caller
has not seen.  It then deletes or rewrites in one transaction, leaves the tombstone, and
rewrites the owner's canonical files after the commit (an effect ``settle`` drains).

Which tables hold memory text, and how a purge reaches each, is :data:`INVENTORY`; a test holds
it equal to the schema's text-bearing tables, so a new store cannot be forgotten here.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from brainbench.memory.reference import mutations, owner_store, pages
from brainbench.memory.reference.context import Store
from brainbench.memory.reference.facts import StoredFact
from brainbench.memory.reference.fence import fence_rows, fingerprint, without_rows
from brainbench.memory.reference.stamping import write_origin, writer
from brainbench.models.memory import PurgeReceipt, StoreReport

# Every table of the schema with a text column: swept by the purge, or why not.
INVENTORY: dict[str, str] = {
    "facts": "swept",
    "pages": "swept",
    "content_chunks": "swept",
    "page_versions": "swept",
    "memory_requests": "swept",
    "write_gate_holds": "swept",
    "trust_proposals": "swept",
    "sources": "out_of_scope: no_memory_text",
    "page_aliases": "out_of_scope: no_memory_text",
    "extract_rollups": "out_of_scope: no_memory_text",
    "config": "out_of_scope: no_memory_text",
    "write_gate_receipts": "out_of_scope: text_free_ledger",
    "fact_purges": "out_of_scope: text_free_ledger",
    "memory_effects": "out_of_scope: text_free_ledger",
    "owner_files": "out_of_scope: text_free_ledger",
}
REDACTED = "[purged]"


@dataclass
class Scope:
    target: StoredFact
    fact_hash: str
    facts: list[int] = field(default_factory=list)
    pages: list[int] = field(default_factory=list)
    versions: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    holds: list[int] = field(default_factory=list)
    proposals: list[int] = field(default_factory=list)
    chunks: int = 0
    files: list[str] = field(default_factory=list)

    @property
    def revision(self) -> str:
        ids = [self.facts, self.pages, self.versions, self.requests, self.holds, self.proposals, self.files]
        return hashlib.sha256(json.dumps(ids).encode()).hexdigest()[:16]

    @property
    def token(self) -> str:
        return self.fact_hash[:8]


def _has_row(text: str, fact_hash: str) -> bool:
    return any(fingerprint(r.claim) == fact_hash for r in fence_rows(text))


def _contains(value: Any, needle: str) -> bool:
    if isinstance(value, str):
        return needle in value.lower()
    if isinstance(value, dict):
        return any(_contains(v, needle) for v in value.values())
    if isinstance(value, list):
        return any(_contains(v, needle) for v in value)
    return False


def _redact(value: Any, pattern: re.Pattern[str]) -> Any:
    if isinstance(value, str):
        return pattern.sub(REDACTED, value)
    if isinstance(value, dict):
        return {k: _redact(v, pattern) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact(v, pattern) for v in value]
    return value


def find_scope(store: Store, target: StoredFact) -> Scope:
    fact_hash = fingerprint(target.fact)
    scope = Scope(target, fact_hash)
    conn = store.conn
    scope.facts = [r[0] for r in conn.execute(
        "SELECT id FROM facts WHERE source_id = %s AND visibility = %s AND entity_slug IS NOT DISTINCT FROM %s"
        " AND fingerprint = %s ORDER BY id", (target.source_id, target.visibility, target.entity_slug, fact_hash))]
    scope.pages = [r[0] for r in conn.execute(
        "SELECT id, compiled_truth, timeline FROM pages WHERE source_id = %s ORDER BY id", (target.source_id,))
        if _has_row(r[1], fact_hash) or _has_row(r[2], fact_hash)]
    if scope.pages:
        row = conn.execute("SELECT count(*) FROM content_chunks WHERE page_id = ANY(%s)", (scope.pages,)).fetchone()
        scope.chunks = int(row[0]) if row else 0
    scope.versions = [r[0] for r in conn.execute(
        "SELECT id, compiled_truth, timeline FROM page_versions WHERE source_id = %s ORDER BY id", (target.source_id,))
        if _has_row(r[1], fact_hash) or _has_row(r[2], fact_hash)]
    needle = target.fact.lower()
    scope.requests = [r[0] for r in conn.execute(
        "SELECT id, request FROM memory_requests WHERE source_id = ANY(%s) ORDER BY id", (store.ns.sources,))
        if _contains(r[1], needle)]
    scope.holds = [r[0] for r in conn.execute(
        "SELECT id, payload FROM write_gate_holds WHERE source_id = %s ORDER BY id", (target.source_id,))
        if isinstance(r[1], dict) and isinstance(r[1].get("fact"), str) and fingerprint(r[1]["fact"]) == fact_hash]
    scope.proposals = [r[0] for r in conn.execute(
        "SELECT id FROM trust_proposals WHERE source_id = %s AND (target_id = ANY(%s) OR related_id = ANY(%s))"
        " ORDER BY id", (target.source_id, scope.facts, scope.facts))]
    scope.files = owner_store.fence_slugs(store, fact_hash)
    return scope


def _report(store: str, n: int, status: str = "deleted") -> StoreReport:
    return StoreReport(store=store, status=status if n else "not_present", removed=n)  # type: ignore[arg-type]


def _receipt(scope: Scope, stores: list[StoreReport], dry_run: bool) -> PurgeReceipt:
    t = scope.target
    return PurgeReceipt(
        fact_id=t.id, fact_hash=scope.fact_hash, source_id=t.source_id, subject=t.entity_slug, visibility=t.visibility,
        stores=stores,
        residuals=[StoreReport(store="database_physical", status="out_of_reach",
                               detail="dead row versions remain on disk until the database is vacuumed")],
        confirm_token=scope.token if dry_run else None, expected_revision=scope.revision if dry_run else None)


def preview(store: Store, scope: Scope) -> PurgeReceipt:
    counts = {"facts": len(scope.facts), "pages": len(scope.pages), "content_chunks": scope.chunks,
              "page_versions": len(scope.versions), "memory_requests": len(scope.requests),
              "write_gate_holds": len(scope.holds), "trust_proposals": len(scope.proposals),
              "canonical_markdown": len(scope.files)}
    return _receipt(scope, [_report(name, n, "would_remove") for name, n in counts.items()], dry_run=True)


Step = Callable[[Store, Scope], int]


def _delete_facts(store: Store, scope: Scope) -> int:
    return store.conn.execute("DELETE FROM facts WHERE id = ANY(%s)", (scope.facts,)).rowcount


def _rewrite_pages(store: Store, scope: Scope) -> int:
    drop: Callable[[Any], bool] = lambda r: fingerprint(r.claim) == scope.fact_hash  # noqa: E731
    removed = 0
    for page_id in scope.pages:
        row = store.conn.execute("SELECT slug, compiled_truth, timeline FROM pages WHERE id = %s",
                                 (page_id,)).fetchone()
        if row is None:
            continue
        compiled, n1 = without_rows(row[1], drop)
        timeline, n2 = without_rows(row[2], drop)
        store.conn.execute("UPDATE pages SET compiled_truth = %s, timeline = %s, content_hash = %s, updated_at = now()"
                           " WHERE id = %s", (compiled, timeline, hashlib.sha256(
                               f"{compiled}\x00{timeline}".encode()).hexdigest(), page_id))
        removed += n1 + n2
    return removed


def _rebuild_chunks(store: Store, scope: Scope) -> int:
    if mutations.active("purge_skips_chunks"):
        return 0
    for page_id in scope.pages:
        pages.rebuild_chunks(store, page_id)
    return scope.chunks


def _rewrite_versions(store: Store, scope: Scope) -> int:
    drop: Callable[[Any], bool] = lambda r: fingerprint(r.claim) == scope.fact_hash  # noqa: E731
    for version_id in scope.versions:
        row = store.conn.execute("SELECT compiled_truth, timeline FROM page_versions WHERE id = %s",
                                 (version_id,)).fetchone()
        if row is not None:
            store.conn.execute("UPDATE page_versions SET compiled_truth = %s, timeline = %s WHERE id = %s",
                               (without_rows(row[0], drop)[0], without_rows(row[1], drop)[0], version_id))
    return len(scope.versions)


def _redact_requests(store: Store, scope: Scope) -> int:
    if mutations.active("purge_skips_journal"):
        return 0
    pattern = re.compile(re.escape(scope.target.fact), re.I)
    for request_id in scope.requests:
        row = store.conn.execute("SELECT request FROM memory_requests WHERE id = %s", (request_id,)).fetchone()
        if row is not None:
            store.conn.execute("UPDATE memory_requests SET request = %s WHERE id = %s",
                               (json.dumps(_redact(row[0], pattern)), request_id))
    return len(scope.requests)


def _delete_holds(store: Store, scope: Scope) -> int:
    return store.conn.execute("DELETE FROM write_gate_holds WHERE id = ANY(%s)", (scope.holds,)).rowcount


def _close_proposals(store: Store, scope: Scope) -> int:
    return store.conn.execute("UPDATE trust_proposals SET status = 'purged', before_state = '{}' WHERE id = ANY(%s)",
                              (scope.proposals,)).rowcount


# The swept stores in the order the purge reaches them; each one's receipt row names its table.
SWEEPS: tuple[tuple[str, Step], ...] = (
    ("facts", _delete_facts), ("pages", _rewrite_pages), ("content_chunks", _rebuild_chunks),
    ("page_versions", _rewrite_versions), ("memory_requests", _redact_requests),
    ("write_gate_holds", _delete_holds), ("trust_proposals", _close_proposals),
)
_SKIPPED_BY = {"content_chunks": "purge_skips_chunks", "memory_requests": "purge_skips_journal"}


def execute(store: Store, scope: Scope, request: dict[str, Any]) -> PurgeReceipt:
    reports: list[StoreReport] = []
    # The owner's writer; pages and facts keep their tiers (a managed fence edit is no owner rewrite).
    with writer(store.conn, "operator_curated", write_origin("owner_sync", "owner"), keep=("pages", "facts")):
        request_id = store.journal("purge", "owner", request)
        for name, step in SWEEPS:
            n = step(store, scope)
            if not mutations.active(_SKIPPED_BY.get(name, "")):
                reports.append(_report(name, n))
        t = scope.target
        store.conn.execute("INSERT INTO fact_purges (source_id, visibility, subject, fact_hash)"
                           " VALUES (%s, %s, %s, %s)", (t.source_id, t.visibility, t.entity_slug, scope.fact_hash))
        if scope.files:
            store.queue_effect(request_id, "canonical_rewrite",
                               {"slugs": scope.files, "fact_hashes": [scope.fact_hash]})
    pending = store.run_effects()
    if not scope.files:
        files = StoreReport(store="canonical_markdown", status="not_present")
    else:
        files = StoreReport(store="canonical_markdown", status="incomplete" if pending else "deleted",
                            removed=0 if pending else len(scope.files))
    return _receipt(scope, [*reports, files], dry_run=False)
