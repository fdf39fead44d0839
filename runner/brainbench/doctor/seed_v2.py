"""Doctor's checks of seed contract v2: the ``write_back`` and ``operations`` commands an image declares.

On a clone of its own, seeded with doctor's reference fixture, exactly as a run runs them (the
seam's hardened container, the clone's owner role, the contract's timeouts):

* write_back gets a one-segment document (one fact about the page doctor seeded) and must exit 0;
  with operations declared, ``recall`` of that page must return the fact with its provenance;
* every operation doctor sends must answer in the outcome shape of its verb;
* an ``unsupported`` answer must be honest: the runner's own fingerprint of the clone (every
  table, read as superuser) is the same before and after it.  A system that says it cannot and
  then does anyway would be scored on a step "that could not run" while it ran.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anyio
from psycopg import sql

from brainbench.memory.image import UNSUPPORTED, ImageMemory, run_failure
from brainbench.models import memory as m
from brainbench.models.corpus import Fixture, Turn
from brainbench.models.write_back_doc import WriteBackDocument
from brainbench.models.writeback import ExtractedFact, SegmentInput
from brainbench.orchestrator.image_memory import command_runner
from brainbench.writeback.document import document_for

from . import sample
from .checks import CheckResult, DoctorReport

FIXTURE_ID = "doctor-reference"
FACT = "Acme Example chose a May launch"
ENTITY = sample.EXPECTED_SLUG
# What doctor asks the operations command, in order: writes first, then reads and introspection.
WRITE_OPS = ("remember", "put_page", "forget", "confirm", "raise_tier_raw", "purge")


class _OneFact:
    """The gold extractor's part for doctor's sample: the one fact, found in every segment."""

    def extract(self, segment_input: SegmentInput) -> list[ExtractedFact]:
        return [ExtractedFact(fact=FACT, entity_slug=ENTITY, source=sample.SOURCE)]


def document() -> WriteBackDocument:
    """A two-turn session whose extractor found one fact about the page doctor seeded, rendered exactly as a
    run renders a fixture's session (frontmatter, title, segments): an image reads doctor's sample as it
    would read the corpus."""
    fixture = Fixture(schema_version=1, fixture_id=FIXTURE_ID, suites=["write-back"],
                      turns=[Turn(turn_id=1, role="user", text=f"{FACT}.", ts="2026-01-05T10:00:00Z"),
                             # gbrain's segmenter keeps a segment of two messages or more
                             Turn(turn_id=2, role="assistant", text="Noted.", ts="2026-01-05T10:00:30Z")])
    return document_for(fixture, _OneFact())


def fingerprint(dbs: Any, name: str) -> dict[str, str]:
    """table → a hash of its rows, for every base table of the clone (the runner's own read)."""
    out: dict[str, str] = {}
    with dbs.admin(name) as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT table_schema || '.' || table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            " AND table_schema NOT IN ('pg_catalog', 'information_schema') ORDER BY 1")]
        for table in tables:
            schema, _, rel = table.partition(".")
            row = conn.execute(sql.SQL("SELECT md5(coalesce(string_agg(t::text, ',' ORDER BY t::text), '')) FROM {} t")
                               .format(sql.Identifier(schema, rel))).fetchone()
            out[table] = row[0] if row else ""
    return out


async def check_v2(report: DoctorReport, proc: Any, dbs: Any, name: str, url: str, contract: Any, mode: str) -> None:
    """The v2 commands of ``contract`` on the seeded clone ``name`` (``url``: its owner's)."""
    env: Mapping[str, str] = {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": sample.SOURCE,
                              "BRAINBENCH_FIXTURE": FIXTURE_ID}
    run = command_runner(proc)
    doc = document()
    if contract.write_back:
        what = f"write_back ({' '.join(contract.write_back)})"
        outcome = await anyio.to_thread.run_sync(run, contract.write_back, doc.model_dump_json().encode(), env,
                                                 contract.write_back_timeout_s)
        fault = run_failure(what, outcome, contract.write_back_timeout_s)
        report.results.append(CheckResult(f"seed contract write_back ({mode})", "fail" if fault else "pass",
                                          fault.detail if fault else f"exit 0, {outcome.duration_ms:.0f} ms"))
    if not contract.operations:
        return
    ops = ImageMemory.of(run, contract, env)
    if contract.write_back:
        read = await anyio.to_thread.run_sync(ops.perform, m.Recall(page_slug=doc.page_slug, limit=50))
        found = [i for i in getattr(read, "items", []) if i.text == FACT]
        stamped = [i for i in found if (i.provenance, i.session_id, i.page_slug) == (
            doc.provenance, doc.session_id, doc.page_slug)]
        verdict = ("pass", "recall returned the written-back fact with its provenance") if stamped else (
            "fail", ops.faults[-1].detail if ops.faults else
            f"recall (page_slug) answered {'ok' if read.ok else read.code} but "
            + ("not the fact's provenance (provenance, session_id, page_slug)" if found else "not the fact"))
        report.results.append(CheckResult(f"seed contract write-back read ({mode})", *verdict))
    await _check_operations(report, ops, dbs, name, mode)


def _requests(fact_id: int | None) -> list[m.MemoryRequest]:
    ref = m.RowRef(table="facts", id=fact_id or 1)
    return [
        m.PutPage(actor="local_agent", slug="notes/doctor-note", content="# Doctor note\n\nA note.\n"),
        m.Confirm(actor="owner", ref=ref, interactive=True),
        m.RaiseTierRaw(ref=ref),
        m.Settle(), m.GetPage(slug=sample.EXPECTED_SLUG), m.Search(query="Acme"), m.Recall(entity=ENTITY),
        m.ContextPack(entities=[ENTITY]), m.RowTier(ref=ref), m.FactState(fact_id=ref.id),
        m.FactIdByClaim(claim=FACT), m.PageId(slug=sample.EXPECTED_SLUG), m.CanaryPersisted(canary="zz-canary"),
        m.CanaryHeld(canary="zz-canary"), m.RowFlagged(ref=ref), m.ClaimActive(claim=FACT),
        m.CanonicalFiles(slugs=[sample.EXPECTED_SLUG], needle="acme"),
        m.Forget(actor="local_agent", fact_id=ref.id),
        m.Purge(actor="owner", fact_id=ref.id, dry_run=True),
    ]


async def check_events(report: DoctorReport, proc: Any, mode: str, harness: str, env: Mapping[str, str],
                       timeout_s: float, contract: Any) -> None:
    """Each lifecycle event the image declares for ``harness`` (beyond the prompt call doctor already
    checks) once, shaped as the run sends it: it must answer without a fault."""
    from brainbench.executors.base import HookCall
    from brainbench.harnesses.grading import grade
    from brainbench.harnesses.registry import SEAMS

    extra = {"Stop": {"stop_hook_active": False}, "SessionEnd": {"reason": "other"},
             "SessionStart": {"source": "startup"}}
    prior: dict[str, object] = {"messages": []} if SEAMS[harness].prior == "messages" else {"transcript_path": None}
    for event in contract.events.get(harness, []):
        if event in ("UserPromptSubmit", "before_prompt_build"):
            continue
        payload = {"hook_event_name": event, "session_id": "doctor", "cwd": "/tmp", "permission_mode": "default",
                   **prior, **extra.get(event, {})}
        outcome = await proc.call(HookCall(json.dumps(payload).encode(), env, timeout_s))
        graded = grade(outcome, SEAMS[harness].dialect, event)
        report.results.append(CheckResult(
            f"lifecycle event {event} ({mode})", "fail" if graded.fault else "pass",
            f"{graded.fault}: {graded.detail}" if graded.fault else f"exit 0, {outcome.duration_ms:.0f} ms"))


async def _check_operations(report: DoctorReport, ops: ImageMemory, dbs: Any, name: str, mode: str) -> None:
    opened = await anyio.to_thread.run_sync(ops.perform, m.OpenNamespace(namespace="bb-doctor"))
    remembered = await anyio.to_thread.run_sync(ops.perform, m.Remember(actor="local_agent", fact=FACT,
                                                                         entity=ENTITY))
    ref = getattr(remembered, "ref", None)
    answered: list[str] = []
    unsupported: list[str] = []
    lied: list[str] = []
    for request in [*_requests(ref.id if ref is not None else None)]:
        before = await anyio.to_thread.run_sync(fingerprint, dbs, name) if request.op in WRITE_OPS else None
        out = await anyio.to_thread.run_sync(ops.perform, request)
        if out.code == UNSUPPORTED:
            unsupported.append(request.op)
            if before is not None and await anyio.to_thread.run_sync(fingerprint, dbs, name) != before:
                lied.append(request.op)
        elif out.code != "seam_fault":
            answered.append(request.op)
    for label, out in (("open_namespace", opened), ("remember", remembered)):
        if out.code != "seam_fault":
            answered.insert(0, label)
    if ops.faults:
        report.results.append(CheckResult(f"seed contract operations ({mode})", "fail",
                                          f"{len(ops.faults)} answer(s) broke the contract; first: "
                                          f"{ops.faults[0].detail}"))
    else:
        report.results.append(CheckResult(f"seed contract operations ({mode})", "pass",
                                          f"{len(answered) + len(unsupported)} operations answered in shape"
                                          + (f"; unsupported: {', '.join(unsupported)}" if unsupported else "")))
    report.results.append(CheckResult(
        f"seed contract unsupported is honest ({mode})", "fail" if lied else "pass",
        f"answered unsupported but changed its store: {', '.join(lied)}" if lied
        else "no operation that answered unsupported changed the store"))

