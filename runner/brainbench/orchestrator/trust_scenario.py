"""Run a memory-trust fixture's steps through a memory system (trust spec §2.3–§2.6).

Each step becomes one or two memory operations (the actor × op table of §2.4), then ``settle``;
a purge is followed by the runner's own scans of every store.  Steps never throw: every
refusal, failure or step that could not run is a recorded outcome, scored as the spec says.

``before_step`` is the mutation tests' hook (gbrain's ``beforeStep``): a test sets
:data:`BEFORE_STEP` in-process to break the brain between steps; nothing else reaches it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg

from brainbench.brain.probe import probe_stores
from brainbench.memory.operations import MemoryOperations
from brainbench.models import memory as m
from brainbench.models.corpus import Fixture, TrustStep
from brainbench.models.trust_run import StepOutcome, StepRecord

# Test-only: called as BEFORE_STEP(conn, fixture, step) before each step.
BEFORE_STEP: Callable[[psycopg.Connection, Fixture, TrustStep], None] | None = None
CONNECTOR_FEED_OWNER = "acme-example"


def namespace_of(fixture_id: str) -> str:
    return ("bb-" + fixture_id)[:60]


def needs_connector(fixture: Fixture) -> bool:
    return any(s.actor == "connector" for s in fixture.trust_steps or [])


class NamespaceRefused(RuntimeError):
    """The memory system did not open a namespace; ``code`` is its outcome code."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.code = code


def open_namespace(ops: MemoryOperations, fixture: Fixture, protections: bool) -> m.NamespaceOpened:
    out = ops.perform(m.OpenNamespace(namespace=namespace_of(fixture.fixture_id), protections=protections,
                                      connector=needs_connector(fixture),
                                      connector_feed=f"{CONNECTOR_FEED_OWNER}/{fixture.fixture_id}"))
    if not isinstance(out, m.NamespaceOpened) or not out.ok:
        raise NamespaceRefused(f"{fixture.fixture_id}: the memory system would not open a namespace: {out.code}",
                               str(out.code))
    return out


def _outcome(out: Any) -> StepOutcome:
    return StepOutcome(ok=out.ok, code=out.code, message=out.message)


def _missing(rec: StepRecord) -> StepRecord:
    rec.outcome = StepOutcome(ok=False, code="bench_target_missing", message="the target step produced no row")
    return rec


def connector_item(step: TrustStep) -> tuple[str, str]:
    """A connector capture's content as an issue: the first ``# `` line is its title, the rest its body."""
    lines = (step.content or "").split("\n")
    title_at = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    title = lines[title_at][2:].strip() if title_at is not None else step.step_id
    body = "\n".join(line for i, line in enumerate(lines) if i != title_at).strip()
    return title, body


class Scenario:
    """One fixture's steps against one memory system, in one namespace."""

    def __init__(self, ops: MemoryOperations, conn: psycopg.Connection, fixture: Fixture,
                 opened: m.NamespaceOpened) -> None:
        self.ops = ops
        self.conn = conn  # the runner's own connection: only for its independent scans
        self.fixture = fixture
        self.source = opened.sources[0]
        self.sources = list(opened.sources)
        self.records: dict[str, StepRecord] = {}

    # --- row resolution (§2.5) ---------------------------------------------------------------

    def row_tier(self, ref: m.RowRef | None) -> Any:
        if ref is None:
            return None
        return self.ops.perform(m.RowTier(ref=ref)).tier  # type: ignore[union-attr]

    def resolve(self, step_id: str, claim: str | None = None) -> m.RowRef | None:
        rec = self.records.get(step_id)
        if rec is None:
            return None
        if claim is not None:
            return self.ops.perform(m.FactIdByClaim(claim=claim)).ref  # type: ignore[union-attr]
        if rec.fact_id is not None:
            return m.RowRef(table="facts", id=rec.fact_id)
        if rec.target is not None and rec.page_slug is None:
            return rec.target
        if rec.page_slug is not None:
            return self.ops.perform(m.PageId(slug=rec.page_slug, source=rec.page_source or self.source)).ref  # type: ignore[union-attr]
        return None

    # --- the step loop (§2.3) -------------------------------------------------------------------

    def run(self) -> dict[str, StepRecord]:
        for step in self.fixture.trust_steps or []:
            if BEFORE_STEP is not None:
                BEFORE_STEP(self.conn, self.fixture, step)
            rec = self.execute(step)
            settled = self.ops.perform(m.Settle())
            rec.unsettled = not settled.ok
            if rec.purged_claim is not None and rec.actor == "owner":
                self._post_purge(rec)
            self.records[step.step_id] = rec
        return self.records

    def execute(self, step: TrustStep) -> StepRecord:
        rec = StepRecord(step_id=step.step_id, actor=step.actor, op=step.op)
        if step.target:
            rec.target = self.resolve(step.target, step.target_claim)
            rec.target_tier_before = self.row_tier(rec.target)
        out = self._dispatch(step, rec)
        if out is not None:
            rec.outcome = _outcome(out)
        if step.target and rec.target is not None:
            rec.target_tier_after = self.row_tier(rec.target)
        return rec

    def _dispatch(self, step: TrustStep, rec: StepRecord) -> Any:
        actor, op = step.actor, step.op
        if op == "write_file":
            rec.page_slug = step.slug
            return self.ops.perform(m.OwnerWrite(slug=step.slug, content=step.content))
        if op == "sync":
            return self.ops.perform(m.OwnerSync())
        if op in ("put_page", "capture") and actor in ("local_agent", "remote_agent"):
            rec.page_slug = step.slug
            shape = m.PutPage if op == "put_page" else m.Capture
            return self.ops.perform(shape(actor=actor, slug=step.slug, content=step.content,
                                          content_origin=step.content_origin))
        if op == "capture" and actor == "connector":
            title, body = connector_item(step)
            out = self.ops.perform(m.ConnectorIngest(title=title, body=body))
            rec.page_slug, rec.page_source = getattr(out, "slug", None), getattr(out, "source", None)
            return out
        if op == "remember" and actor in ("local_agent", "remote_agent"):
            replaces = rec.target.id if rec.target is not None and rec.target.table == "facts" else None
            out = self.ops.perform(m.Remember(actor=actor, fact=step.fact, entity=step.entity, kind=step.kind,
                                              content_origin=step.content_origin, replaces=replaces))
            ref = getattr(out, "ref", None)
            if out.ok and ref is not None and ref.table == "facts" and ref.id > 0:
                rec.fact_id = ref.id
            return out
        if op == "confirm" and actor in ("owner", "local_agent", "remote_agent"):
            if rec.target is None:
                _missing(rec)
                return None
            return self.ops.perform(m.Confirm(actor=actor, ref=rec.target, interactive=actor == "owner"))
        if op == "forget" and actor in ("local_agent", "remote_agent"):
            if rec.target is None or rec.target.table != "facts":
                _missing(rec)
                return None
            return self.ops.perform(m.Forget(actor=actor, fact_id=rec.target.id))
        if op == "purge" and actor in ("owner", "remote_agent"):
            return self._purge(actor, rec)
        if op == "raise_tier" and actor == "raw":
            if rec.target is None:
                _missing(rec)
                return None
            return self.ops.perform(m.RaiseTierRaw(ref=rec.target))
        rec.outcome = StepOutcome(ok=False, code="unsupported", message=f"{actor} · {op}")
        return None

    def _purge(self, actor: str, rec: StepRecord) -> Any:
        if rec.target is None or rec.target.table != "facts":
            _missing(rec)
            return None
        state = self.ops.perform(m.FactState(fact_id=rec.target.id)).fact  # type: ignore[union-attr]
        if actor != "owner":  # a remote agent gets a dry run only
            return self.ops.perform(m.Purge(actor="remote_agent", fact_id=rec.target.id, dry_run=True))
        if state is not None:
            rec.purged_claim = state.fact
            rec.pre_purge_hits = probe_stores(self.conn, state.fact)
        dry = self.ops.perform(m.Purge(actor="owner", fact_id=rec.target.id, dry_run=True))
        if not dry.ok or dry.receipt is None:  # type: ignore[union-attr]
            return dry
        out = self.ops.perform(m.Purge(actor="owner", fact_id=rec.target.id, confirm_token=dry.receipt.confirm_token,  # type: ignore[union-attr]
                                       expected_revision=dry.receipt.expected_revision))  # type: ignore[union-attr]
        rec.receipt = getattr(out, "receipt", None)
        return out

    def _post_purge(self, rec: StepRecord) -> None:
        claim = rec.purged_claim or ""
        rec.post_purge_hits = probe_stores(self.conn, claim)
        slugs = [r.page_slug for r in self.records.values() if r.page_slug]
        files = self.ops.perform(m.CanonicalFiles(slugs=slugs, needle=claim))
        rec.post_purge_files = list(getattr(files, "slugs", []))


def run_trust_steps(ops: MemoryOperations, conn: psycopg.Connection, fixture: Fixture,
                    protections: bool) -> Scenario:
    """Open the fixture's namespace and run its steps; the scenario keeps the records for scoring."""
    scenario = Scenario(ops, conn, fixture, open_namespace(ops, fixture, protections))
    scenario.run()
    return scenario
