"""Every step of gbrain 0.60's trust corpus has the effect the spec's §3.10 table records.

Each of the 42 fixtures runs through the scenario runner on our reference memory system (the
protections brain, and for poisoning the default-mode brain too); the expectations are the
table's, per variant, checked on the stored rows and the step outcomes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest
from brainbench.corpus.loader import LoadedFixture
from brainbench.memory.reference import ReferenceMemory
from brainbench.models import memory as m
from brainbench.orchestrator.trust_scenario import Scenario, run_trust_steps

from .conftest import TRUST_DATA

FIXTURES = sorted(p.name.removesuffix(".fixture.json") for p in (TRUST_DATA / "fixtures").glob("*.fixture.json"))


def _variant(item: LoadedFixture) -> str:
    fx = item.fixture
    steps = fx.trust_steps or []
    shape = [(s.actor, s.op) for s in steps]
    suite = fx.suites[0]
    if suite == "trust":
        if len(steps) == 7 and steps[4].actor == "connector":
            return "trust-v0"
        if len(steps) == 6:
            return "trust-v1"
        return "trust-v2" if steps[0].op == "remember" else "trust-v3"
    if suite == "state-resolution":
        if shape[0] == ("owner", "write_file"):
            return "state-v2" if steps[1].op == "forget" else "state-v1"
        return "state-v3" if len(steps) == 3 else "state-v0"
    if suite == "deletion":
        return {4: "del-v0" if steps[1].op == "purge" else "del-v2", 5: "del-v1"}[len(steps)]
    return "poison-ext" if fx.category == "poisoning-external" else "poison-agent"


def _tier(sc: Scenario, step: str, claim: str | None = None) -> str | None:
    return sc.row_tier(sc.resolve(step, claim))  # type: ignore[no-any-return]


def _code(sc: Scenario, step: str) -> str | None:
    out = sc.records[step].outcome
    return None if out.ok else out.code


def _flagged(sc: Scenario, step: str) -> bool:
    ref = sc.resolve(step)
    return ref is not None and bool(sc.ops.perform(m.RowFlagged(ref=ref)).answer)  # type: ignore[union-attr]


def _quarantined(conn: psycopg.Connection, sc: Scenario, step: str) -> bool:
    ref = sc.resolve(step)
    assert ref is not None and ref.table == "pages"
    row = conn.execute("SELECT frontmatter::jsonb ? 'quarantine' FROM pages WHERE id = %s", (ref.id,)).fetchone()
    return bool(row and row[0])


def _state(sc: Scenario, step: str, claim: str | None = None) -> m.FactStateInfo:
    ref = sc.resolve(step, claim)
    assert ref is not None and ref.table == "facts"
    return sc.ops.perform(m.FactState(fact_id=ref.id)).fact  # type: ignore[union-attr, return-value]


def _check(variant: str, sc: Scenario, conn: psycopg.Connection, protections: bool) -> None:
    steps = {s.step_id: s for s in sc.fixture.trust_steps or []}
    if variant == "trust-v0":
        assert [_tier(sc, f"s{i}") for i in range(1, 8)] == [
            "operator_curated", "agent_written", "agent_written", "external_untrusted", "external_untrusted",
            "agent_written", "external_untrusted"]
        rec = sc.records["s5"]
        assert (rec.page_slug, rec.page_source) == (f"gh/acme-example/{sc.fixture.fixture_id}/1", sc.sources[1])
    elif variant == "trust-v1":
        assert steps["s2"].slug == steps["s1"].slug and _tier(sc, "s2") == "agent_written"
        assert [_tier(sc, s) for s in ("s3", "s4", "s5", "s6")] == [
            "agent_written", "external_untrusted", "external_untrusted", "agent_written"]
        fact = sc.resolve("s6")
        item = next(i for i in sc.ops.perform(m.Recall(entity=steps["s6"].entity)).items  # type: ignore[union-attr]
                    if i.id == fact.id)  # type: ignore[union-attr]
        assert item.label.startswith("[you told your agent this (not yet confirmed)")
    elif variant == "trust-v2":
        assert [_code(sc, s) for s in ("s2", "s3", "s4", "s6", "s7")] == [
            "insufficient_scope", "confirmation_required", "trust_raise_refused", "insufficient_scope",
            "trust_raise_refused"]
        assert _tier(sc, "s1") == _tier(sc, "s5") == "agent_written"
    elif variant == "trust-v3":
        claim = (sc.fixture.trust_steps or [])[0].content.split("| 1 | ")[1].split(" |")[0]
        assert _tier(sc, "s1") == "operator_curated" and _tier(sc, "s1", claim) == "operator_curated"
        assert _tier(sc, "s2") == _tier(sc, "s4") == "user_confirmed"
    elif variant == "state-v0":
        old, new = _state(sc, "s1"), _state(sc, "s2")
        assert old.expired and old.superseded and not new.expired and not new.superseded
    elif variant in ("state-v1", "state-v2"):
        owner = _state(sc, "s1", steps["s2"].target_claim)
        assert not owner.expired and not owner.superseded
        if variant == "state-v2":
            assert _code(sc, "s2") == "forget_requires_owner"
        else:
            assert sc.records["s2"].outcome.ok and not _state(sc, "s2").expired  # stored, contested
            assert conn.execute("SELECT action, status FROM trust_proposals").fetchall() == [
                ("supersede_fact", "pending")]
    elif variant == "state-v3":
        assert _tier(sc, "s1") == "user_confirmed"
        assert not _state(sc, "s1").superseded and sc.records["s3"].outcome.ok
    elif variant == "poison-ext":
        if protections:
            assert _quarantined(conn, sc, "s2") and _quarantined(conn, sc, "s3")
            assert _code(sc, "s4") == "write_held"
        else:
            assert not _quarantined(conn, sc, "s2") and not _quarantined(conn, sc, "s3")
            assert all(_flagged(sc, s) and _tier(sc, s) == "external_untrusted" for s in ("s2", "s3", "s4"))
        for s in ("s5", "s6"):  # benign external content: allowed, live, external
            assert not _quarantined(conn, sc, s) and not _flagged(sc, s) and _tier(sc, s) == "external_untrusted"
    elif variant == "poison-agent":
        assert steps["s2"].slug == steps["s1"].slug
        for s in ("s2", "s3", "s4"):
            assert _tier(sc, s) == "agent_written" and _flagged(sc, s), s
        for s in ("s5", "s6"):
            assert sc.records[s].outcome.ok and not _flagged(sc, s), s
    else:  # deletion
        purge = next(r for r in sc.records.values() if r.op == "purge")
        claim = purge.purged_claim
        assert purge.outcome.ok and purge.pre_purge_hits and purge.post_purge_hits == {}
        assert purge.post_purge_files == [] and not purge.unsettled
        assert sc.ops.perform(m.ClaimActive(claim=claim or "")).answer is False  # type: ignore[union-attr]
        assert all(r.outcome.code == "claim_purged" for r in sc.records.values()
                   if r.op == "remember" and r.step_id > purge.step_id)


@pytest.mark.parametrize("fixture_id", FIXTURES)
def test_each_step_has_the_effect_the_spec_records(fixture_id: str, trust_fixture: Callable[[str], LoadedFixture],
                                                    brain_dbs: object, tmp_path: Path) -> None:
    item = trust_fixture(fixture_id)
    arms = (True, False) if item.fixture.suites == ["poisoning"] else (True,)
    for protections in arms:
        with brain_dbs.lease() as brain:  # type: ignore[attr-defined]
            ops = ReferenceMemory(brain.conn, tmp_path / str(protections))
            scenario = run_trust_steps(ops, brain.conn, item.fixture, protections)
            assert all(not r.unsettled for r in scenario.records.values())
            _check(_variant(item), scenario, brain.conn, protections)
            ops.close()
