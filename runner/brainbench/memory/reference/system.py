"""Our reference memory system: the memory-operations interface over the brain's Postgres database.

One instance serves one fixture's namespace on one brain database (a clone of the migrated
template, so the tier trigger and every store of migration 004 are there).  The owner's own
store is a directory of canonical markdown files under ``scratch``.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import psycopg

from brainbench.brain.markdown import PageParseError
from brainbench.corpus.slugs import SlugError, validate_slug
from brainbench.memory.operations import InfrastructureError, MemoryOperations, code_from_message
from brainbench.memory.reference import connector, facts, mutations, owner_store, pages, purge, reads
from brainbench.memory.reference.context import DEFAULTS, PROTECTIONS, Namespace, Store
from brainbench.memory.reference.gate import verdict_of
from brainbench.memory.reference.stamping import FACT_KINDS, InvalidParams, write_origin, write_tier, writer
from brainbench.models import memory as m

CONNECTOR_SUFFIX = "-gh"


def connector_source(source: str) -> str:
    return source[:56] + CONNECTOR_SUFFIX


class ReferenceMemory(MemoryOperations):
    name: ClassVar[str] = "reference"

    def __init__(self, conn: psycopg.Connection, scratch: Path) -> None:
        self.conn = conn
        self.scratch = scratch
        self._store: Store | None = None
        self._handlers: dict[str, Callable[[Any], Any]] = {
            "open_namespace": self._open, "owner_write": self._owner_write, "owner_sync": self._owner_sync,
            "put_page": self._put_page, "capture": self._put_page, "connector_ingest": self._connector_ingest,
            "remember": self._remember, "forget": self._forget, "confirm": self._confirm, "purge": self._purge,
            "raise_tier_raw": self._raise, "settle": self._settle, "get_page": self._get_page,
            "search": self._search, "recall": self._recall, "context_pack": self._context_pack,
            "row_tier": self._row_tier, "fact_state": self._fact_state, "fact_id_by_claim": self._fact_id_by_claim,
            "page_id": self._page_id, "canary_persisted": self._canary_persisted, "canary_held": self._canary_held,
            "row_flagged": self._row_flagged, "claim_active": self._claim_active,
            "canonical_files": self._canonical_files,
        }

    # --- the interface -----------------------------------------------------------------

    def call(self, request: m.MemoryRequest) -> m.MemoryOutcome:
        if request.op != "open_namespace" and self._store is None:
            return m.refusal(request.op, "no_namespace", "open_namespace first")  # type: ignore[no-any-return]
        try:
            return self._handlers[request.op](request)  # type: ignore[no-any-return]
        except psycopg.OperationalError as exc:
            raise InfrastructureError(f"the brain database failed: {exc}") from exc
        except (InvalidParams, PageParseError, SlugError) as exc:
            return m.refusal(request.op, "invalid_params", str(exc))  # type: ignore[no-any-return]
        except psycopg.Error as exc:
            # A database rule refused the write (the tier trigger): that refusal is the answer.
            message = (exc.diag.message_primary if exc.diag else None) or str(exc)
            return m.refusal(request.op, code_from_message(message), message)  # type: ignore[no-any-return]

    def close(self) -> None:
        if self._store is not None:
            shutil.rmtree(self._store.ns.owner_dir.parent, ignore_errors=True)

    @property
    def store(self) -> Store:
        assert self._store is not None
        return self._store

    # --- namespace ------------------------------------------------------------------------

    def _open(self, req: m.OpenNamespace) -> m.NamespaceOpened:
        ns = Namespace(source=req.namespace, owner_dir=self.scratch / req.namespace / "owner")
        if req.connector:
            ns.connector = connector_source(req.namespace)
            ns.connector_feed = req.connector_feed or f"feed/{req.namespace}"
        ns.owner_dir.mkdir(parents=True, exist_ok=True)
        store = Store(self.conn, ns, {"canonical_rewrite": owner_store.rewrite_without})
        settings = {**DEFAULTS, **(PROTECTIONS if req.protections else {})}
        if mutations.active("activation_allow"):
            settings["trust.agent_activation"] = "allow"
        with self.conn.transaction():
            for sid in ns.sources:
                self.conn.execute(
                    "INSERT INTO sources (id, name, config) VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
                    (sid, sid, json.dumps({"kind": "connector" if sid == ns.connector else "owner"})))
            store.set_settings(settings)
            self._mutate_schema()
        self._store = store
        return m.NamespaceOpened(sources=ns.sources, connector_source=ns.connector)

    def _mutate_schema(self) -> None:
        if mutations.active("tier_trigger_dropped"):
            self.conn.execute("DROP TRIGGER IF EXISTS trust_tier_stamp ON pages;"
                              " DROP TRIGGER IF EXISTS trust_tier_stamp ON facts")
        if mutations.active("insert_owner_tier"):
            self.conn.execute(
                "CREATE OR REPLACE FUNCTION bb_mutant_stamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
                " NEW.trust_tier := 'operator_curated'; RETURN NEW; END $$;"
                " DROP TRIGGER IF EXISTS zz_mutant ON pages; DROP TRIGGER IF EXISTS zz_mutant ON facts;"
                " CREATE TRIGGER zz_mutant BEFORE INSERT ON pages FOR EACH ROW EXECUTE FUNCTION bb_mutant_stamp();"
                " CREATE TRIGGER zz_mutant BEFORE INSERT ON facts FOR EACH ROW EXECUTE FUNCTION bb_mutant_stamp()")

    # --- writes ---------------------------------------------------------------------------

    def _owner_write(self, req: m.OwnerWrite) -> m.Written:
        slug = validate_slug(req.slug)
        with self.conn.transaction():
            self.store.journal("owner_write", "owner", req.model_dump(mode="json"))
        owner_store.write_file(self.store, slug, req.content)
        out = self._owner_sync(m.OwnerSync())
        page_id = reads.page_id(self.store, slug, None)
        ref = m.RowRef(table="pages", id=page_id) if page_id else None
        return out.model_copy(update={"op": "owner_write", "slug": slug, "source": self.store.ns.source, "ref": ref,
                                      "tier": reads.row_tier(self.store, ref) if ref else None})

    def _owner_sync(self, req: m.OwnerSync) -> m.Written:
        imported, errors = owner_store.sync(self.store, req.model_dump(mode="json"))
        if errors:
            return m.Written(op="owner_sync", ok=False, code="sync_failed", message="; ".join(errors)[:500],
                             imported=imported)
        return m.Written(op="owner_sync", imported=imported, source=self.store.ns.source)

    def _agent_tier(self, channel: str, content_origin: str | None, front: dict[str, Any] | None = None) -> Any:
        tier = write_tier(channel, content_origin, front)
        return "operator_curated" if mutations.active("agent_writes_owner_tier") else tier

    def _put_page(self, req: m.PutPage | m.Capture) -> m.Written:
        slug = validate_slug(req.slug)
        channel = "mcp" if req.actor == "remote_agent" else "cli"
        page = pages.parse(slug, req.content)
        tier = self._agent_tier(channel, req.content_origin, page.frontmatter)
        written = pages.write_page(self.store, self.store.ns.source, page, tier=tier,
                                   origin=write_origin(channel, req.actor, req.content_origin, op=req.op), op=req.op,
                                   actor=req.actor, request=req.model_dump(mode="json"))
        return self._page_outcome(req.op, written)

    def _page_outcome(self, op: str, written: pages.PageWrite) -> m.Written:
        gate = verdict_of(written.decision, written.receipt_ref)
        if written.decision.verdict == "reject":
            return m.refusal(op, "write_gate_rejected", gate=gate)  # type: ignore[no-any-return]
        return m.Written(op=op, ref=m.RowRef(table="pages", id=written.page_id), slug=written.slug,  # type: ignore[arg-type]
                         source=written.source, tier=written.tier, gate=gate,
                         status="quarantined" if written.quarantined else "stored")

    def _connector_ingest(self, req: m.ConnectorIngest) -> m.Written:
        ns = self.store.ns
        if ns.connector is None:
            return m.refusal("connector_ingest", "invalid_params", "this namespace has no connector")  # type: ignore[no-any-return]
        ns.connector_items += 1
        feed = ns.connector_feed or ""  # set whenever the namespace has a connector
        origin = {**write_origin("connector", "connector"), "feed": feed}
        slug = validate_slug(connector.issue_slug(feed, ns.connector_items))
        page = pages.parse(slug, connector.issue_markdown(feed, ns.connector_items, req.title, req.body))
        written = pages.write_page(self.store, ns.connector, page, tier=write_tier("connector"), origin=origin,
                                   op="connector_ingest", actor="connector", request=req.model_dump(mode="json"))
        if ns.connector_items == 1:  # the feed's card arrives with its first item
            card = pages.parse(validate_slug(connector.card_slug(feed)), connector.card_markdown(feed))
            pages.write_page(self.store, ns.connector, card, tier=write_tier("connector"), origin=origin,
                             op="connector_ingest", actor="connector", request={"card": feed})
        return self._page_outcome("connector_ingest", written)

    def _remember(self, req: m.Remember) -> m.Written:
        kind = req.kind or "fact"
        if kind not in FACT_KINDS:
            return m.refusal("remember", "invalid_params", f"kind {kind!r} is not one of {', '.join(FACT_KINDS)}")  # type: ignore[no-any-return]
        channel = "mcp" if req.actor == "remote_agent" else "cli"
        tier = self._agent_tier(channel, req.content_origin)
        if facts.tombstoned(self.store, facts.AGENT_VISIBILITY, req.entity, req.fact):
            with self.conn.transaction():
                self.store.journal("remember", req.actor, {**req.model_dump(mode="json"), "fact": purge.REDACTED})
            return m.refusal("remember", "claim_purged", "the owner purged this claim; it cannot be stored again")  # type: ignore[no-any-return]
        replaces = None
        if req.replaces is not None:
            replaces = facts.load(self.store, req.replaces)
            if replaces is None:
                return m.refusal("remember", "not_found", f"fact {req.replaces} is not in this namespace")  # type: ignore[no-any-return]
        origin = write_origin(channel, req.actor, req.content_origin, op="remember")
        done = facts.remember(self.store, fact=req.fact, entity=req.entity, kind=kind, tier=tier, origin=origin,
                              replaces=replaces, actor=req.actor, request=req.model_dump(mode="json"))
        gate = verdict_of(done.decision, done.receipt_ref, "hold" if done.status == "held" else None)
        if done.status == "held":
            return m.refusal("remember", "write_held", "the write gate held this fact for review", gate=gate)  # type: ignore[no-any-return]
        if done.status == "rejected":
            return m.refusal("remember", "write_gate_rejected", gate=gate)  # type: ignore[no-any-return]
        return m.Written(op="remember", ref=m.RowRef(table="facts", id=done.fact_id or 0), tier=done.tier, gate=gate,
                         status=done.status, contested=done.contested, source=self.store.ns.source)

    def _forget(self, req: m.Forget) -> m.Written:
        target = facts.load(self.store, req.fact_id)
        if target is None:
            return m.refusal("forget", "not_found", f"fact {req.fact_id} is not in this namespace")  # type: ignore[no-any-return]
        channel = "mcp" if req.actor == "remote_agent" else "cli"
        expired, status = facts.forget(self.store, target, tier=self._agent_tier(channel, None),
                                       origin=write_origin(channel, req.actor, op="forget"), actor=req.actor,
                                       request=req.model_dump(mode="json"))
        if not expired:
            return m.refusal("forget", "forget_requires_owner",  # type: ignore[no-any-return]
                             f"forget_requires_owner: only the owner forgets a {target.tier} fact; proposal {status}")
        return m.Written(op="forget", ref=m.RowRef(table="facts", id=target.id), status=status)

    def _confirm(self, req: m.Confirm) -> m.Confirmed:
        tier = reads.row_tier(self.store, req.ref)
        if tier is None or not self._in_namespace(req.ref):
            return m.refusal("confirm", "not_found", f"{req.ref} is not in this namespace")  # type: ignore[no-any-return]
        if tier == "user_confirmed":
            return m.Confirmed(status="unchanged", tier=tier)
        if req.actor == "remote_agent" and not mutations.active("agent_holds_confirm_scope"):
            return m.refusal("confirm", "insufficient_scope",  # type: ignore[no-any-return]
                             f"insufficient_scope: a remote connection cannot confirm; the owner confirms {req.ref}")
        if req.actor != "remote_agent" and not req.interactive:
            return m.refusal("confirm", "confirmation_required",  # type: ignore[no-any-return]
                             "confirmation_required: the owner confirms at an interactive terminal")
        with writer(self.conn, "user_confirmed", None, promotion="user_confirmed", keep=(req.ref.table,)):
            self.store.journal("confirm", req.actor, req.model_dump(mode="json"))
            self.conn.execute(f"UPDATE {req.ref.table} SET trust_tier = 'user_confirmed' WHERE id = %s", (req.ref.id,))
            if req.ref.table == "pages":
                pages.rebuild_chunks(self.store, req.ref.id)  # chunks carry the tier search labels them with
            if req.ref.table == "facts":
                self.conn.execute("UPDATE trust_proposals SET status = 'resolved' WHERE action = 'supersede_fact'"
                                  " AND status = 'pending' AND (target_id = %s OR related_id = %s)",
                                  (req.ref.id, req.ref.id))
        return m.Confirmed(status="confirmed", tier=reads.row_tier(self.store, req.ref))

    def _in_namespace(self, ref: m.RowRef) -> bool:
        row = self.conn.execute(f"SELECT source_id FROM {ref.table} WHERE id = %s", (ref.id,)).fetchone()
        return row is not None and row[0] in self.store.ns.sources

    def _purge(self, req: m.Purge) -> m.Purged:
        if req.actor != "owner":
            return m.refusal("purge", "trusted_local_only", "only the owner purges, at a trusted terminal")  # type: ignore[no-any-return]
        target = facts.load(self.store, req.fact_id)
        if target is None:
            return m.refusal("purge", "not_found", f"fact {req.fact_id} is not in this namespace")  # type: ignore[no-any-return]
        scope = purge.find_scope(self.store, target)
        if req.dry_run:
            return m.Purged(receipt=purge.preview(self.store, scope))
        if req.confirm_token != scope.token or req.expected_revision != scope.revision:
            return m.refusal("purge", "purge_not_confirmed",  # type: ignore[no-any-return]
                             "purge_not_confirmed: the token or revision does not match a dry run of this scope")
        receipt = purge.execute(self.store, scope, req.model_dump(mode="json"))
        if mutations.active("drop_tombstone"):
            self.conn.execute("DELETE FROM fact_purges WHERE source_id = %s", (target.source_id,))
        return m.Purged(receipt=receipt)

    def _raise(self, req: m.RaiseTierRaw) -> m.Raised:
        # Deliberately outside any writer: the database rule alone must refuse it.
        self.conn.execute(f"UPDATE {req.ref.table} SET trust_tier = %s WHERE id = %s", (req.tier, req.ref.id))
        return m.Raised()

    def _settle(self, req: m.Settle) -> m.Settled:
        pending = self.store.run_effects()
        if pending:
            return m.Settled(ok=False, code="unsettled", message=f"{pending} effect(s) still pending", pending=pending)
        return m.Settled()

    # --- reads ----------------------------------------------------------------------------

    def _get_page(self, req: m.GetPage) -> m.Read:
        items = reads.get_page(self.store, req.slug, req.source)
        if not items:
            return m.refusal("get_page", "not_found", f"no page {req.slug}")  # type: ignore[no-any-return]
        return m.Read(op="get_page", items=items)

    def _search(self, req: m.Search) -> m.Read:
        return m.Read(op="search", items=reads.search(self.store, req.query, req.limit))

    def _recall(self, req: m.Recall) -> m.Read:
        return m.Read(op="recall", items=reads.recall(self.store, req.entity, req.query, req.limit))

    def _context_pack(self, req: m.ContextPack) -> m.Read:
        items, withheld = reads.context_pack(self.store, req.entities, req.budget_tokens)
        return m.Read(op="context_pack", items=items, withheld=withheld)

    def _row_tier(self, req: m.RowTier) -> m.Introspected:
        where = reads.page_place(self.store, req.ref.id) if req.ref.table == "pages" else None
        return m.Introspected(op="row_tier", tier=reads.row_tier(self.store, req.ref), slug=where and where[0],
                              source=where and where[1])

    def _fact_state(self, req: m.FactState) -> m.Introspected:
        return m.Introspected(op="fact_state", fact=reads.fact_state(self.store, req.fact_id))

    def _fact_id_by_claim(self, req: m.FactIdByClaim) -> m.Introspected:
        fid = reads.fact_id_by_claim(self.store, req.claim)
        return m.Introspected(op="fact_id_by_claim", ref=m.RowRef(table="facts", id=fid) if fid else None)

    def _page_id(self, req: m.PageId) -> m.Introspected:
        pid = reads.page_id(self.store, req.slug, req.source)
        return m.Introspected(op="page_id", ref=m.RowRef(table="pages", id=pid) if pid else None)

    def _canary_persisted(self, req: m.CanaryPersisted) -> m.Introspected:
        return m.Introspected(op="canary_persisted", answer=reads.canary_persisted(self.store, req.canary))

    def _canary_held(self, req: m.CanaryHeld) -> m.Introspected:
        return m.Introspected(op="canary_held", answer=reads.canary_held(self.store, req.canary))

    def _row_flagged(self, req: m.RowFlagged) -> m.Introspected:
        return m.Introspected(op="row_flagged", answer=reads.row_flagged(self.store, req.ref))

    def _claim_active(self, req: m.ClaimActive) -> m.Introspected:
        return m.Introspected(op="claim_active", answer=reads.claim_active(self.store, req.claim))

    def _canonical_files(self, req: m.CanonicalFiles) -> m.Introspected:
        slugs = owner_store.files_containing(self.store, req.slugs, req.needle)
        return m.Introspected(op="canonical_files", slugs=slugs)

