"""Scoring of the trust, state-resolution and deletion suites (trust spec §4.2, §4.3, §4.5).

Each scorer judges one fixture's gold items against what its steps left in the memory system,
through the memory operations (stored truth: introspection; what a user would see: the
explicit reads) and the runner's own scans.  An item fails once, whatever the number of
reasons; every reason is kept for ``explain``.
"""

from __future__ import annotations

from collections.abc import Callable

from brainbench.metrics.trust_reads import SurfaceRead, current_fact_ids, row_read
from brainbench.models import memory as m
from brainbench.models.corpus import TrustItem
from brainbench.models.trust import UNEXERCISED_CODES, TrustTier, tier_rank
from brainbench.models.trust_run import ItemVerdict, StepRecord, SuiteScore
from brainbench.orchestrator.trust_scenario import Scenario


class _Scoring:
    """Counters, verdicts and the reads shared by one fixture's items."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.ops = scenario.ops
        self.score = SuiteScore()
        self._current: dict[str, set[int]] = {}

    def count(self, *names: str) -> None:
        for name in names:
            self.score.counts[name] = self.score.counts.get(name, 0) + 1

    def judge(self, item: TrustItem, reasons: list[str], **evidence: object) -> None:
        rec = self.scenario.records.get(item.step)
        self.score.gold_total += 1
        if reasons:
            self.score.gold_failed += 1
        self.score.verdicts.append(ItemVerdict(
            fixture_id=self.scenario.fixture.fixture_id, item_id=item.item_id, check=item.check, step=item.step,
            passed=not reasons, reasons=reasons, outcome=rec.outcome if rec else None, **evidence))  # type: ignore[arg-type]

    def place(self, ref: m.RowRef | None) -> tuple[TrustTier | None, str | None, str | None]:
        if ref is None:
            return None, None, None
        out = self.ops.perform(m.RowTier(ref=ref))
        return out.tier, out.slug, out.source  # type: ignore[union-attr]

    def read(self, ref: m.RowRef | None, step: str) -> SurfaceRead:
        _, slug, source = self.place(ref)
        if ref is None:  # the row does not exist: the page surfaces are asked for the step's slug anyway
            rec = self.scenario.records.get(step)
            slug, source = (rec.page_slug, rec.page_source) if rec else (None, None)
        return row_read(self.ops, ref, slug, source)

    def current(self, entity: str) -> set[int]:
        if entity not in self._current:
            self._current[entity] = current_fact_ids(self.ops, entity)
        return self._current[entity]


def _surfaces_for(ref: m.RowRef | None) -> list[str]:
    return ["recall"] if ref is not None and ref.table == "facts" else ["get_page", "search"]


def score_trust(scenario: Scenario, items: list[TrustItem]) -> SuiteScore:
    s = _Scoring(scenario)
    for item in items:
        reasons: list[str] = []
        ref = scenario.resolve(item.step, item.claim)
        stored, _, _ = s.place(ref)
        if item.check == "tier":
            s.count("label_total")
            read = s.read(ref, item.step)
            if stored != item.tier:
                reasons.append(f"stored tier {stored or 'none (no row)'}, expected {item.tier}")
            for surface in _surfaces_for(ref):
                said = read.surfaces.get(surface)
                if said != item.tier:
                    reasons.append(f"{surface} said {said or 'nothing'}, expected {item.tier}")
            if not reasons:
                s.count("label_ok")
            s.judge(item, reasons, stored_tier=stored, surfaces=read.surfaces)
        elif item.check == "max_tier":
            s.count("launder_total")
            if stored is not None and tier_rank(stored) > tier_rank(item.tier):
                s.count("launder_violations")
                reasons.append(f"laundered: stored {stored}, above {item.tier}")
            s.judge(item, reasons, stored_tier=stored)
        else:  # refused
            s.count("promo_total")
            reasons = _promotion(scenario.records.get(item.step))
            if reasons:
                s.count("promo_violations")
            s.judge(item, reasons, stored_tier=stored)
    return s.score


def _promotion(rec: StepRecord | None) -> list[str]:
    if rec is None:
        return ["the step never ran"]
    out = rec.outcome
    before, after = rec.target_tier_before, rec.target_tier_after
    reasons = []
    if out.ok:
        reasons.append("the promotion was accepted")
    if before is not None and after is not None and tier_rank(after) > tier_rank(before):
        reasons.append(f"the tier rose: {before} → {after}")
    if not out.ok and out.code in UNEXERCISED_CODES:
        reasons.append(f"not exercised ({out.code}): an unsupported protection counts as a violation")
    return reasons


def score_state(scenario: Scenario, items: list[TrustItem]) -> SuiteScore:
    s = _Scoring(scenario)
    for item in items:
        ref = scenario.resolve(item.step, item.claim)
        state = None
        if ref is not None and ref.table == "facts":
            state = s.ops.perform(m.FactState(fact_id=ref.id)).fact  # type: ignore[union-attr]
        exists = state is not None
        expired = superseded = not exists  # a missing row reads as expired and superseded
        entity = state.entity_slug if state else None
        if state is not None:
            expired, superseded = state.expired, state.superseded
        is_current = bool(entity) and ref is not None and ref.id in s.current(entity or "")
        reasons: list[str] = []
        if item.check == "current":
            s.count("current_total")
            if ref is None or ref.table != "facts":
                reasons.append("no fact row for this step")
            elif not exists:
                reasons.append("the fact row is gone")
            elif expired or superseded:
                reasons.append("the fact is expired or superseded")
            elif not is_current:
                reasons.append("recall does not return it as current")
            if not reasons:
                s.count("current_ok")
        elif item.check == "stale":
            s.count("stale_total")
            if ref is None or ref.table != "facts":
                reasons.append("stale fact never written (the update was not exercised)")
            elif is_current:
                reasons.append("recall still returns the replaced fact as current")
            if reasons:
                s.count("stale_surfaced")
        elif item.check == "history":
            s.count("history_total")
            if not exists:
                reasons.append("the replaced fact was deleted, not kept as history")
            elif not (expired or superseded):
                reasons.append("the replaced fact is neither expired nor superseded")
            if not reasons:
                s.count("history_ok")
        else:  # guarded
            s.count("guard_total")
            if ref is None or ref.table != "facts":
                reasons.append("no fact row for this step")
            elif expired or superseded:
                reasons.append("a less trusted writer replaced or expired it")
            if reasons:
                s.count("guard_violations")
        tier, _, _ = s.place(ref)
        s.judge(item, reasons, stored_tier=tier)
    return s.score


def score_deletion(scenario: Scenario, items: list[TrustItem]) -> SuiteScore:
    s = _Scoring(scenario)
    for item in items:
        rec = scenario.records.get(item.step)
        claim = item.probe or ""
        s.count("purge_total", "receipt_total")
        reasons: list[str] = []
        if rec is None:
            s.judge(item, ["the purge step never ran"])
            continue
        if (rec.purged_claim or "").lower() != claim.lower():
            reasons.append(f"purged {rec.purged_claim!r}, not the probed claim")
        if rec.unsettled:
            reasons.append("the purge's effects did not settle")
        if not rec.outcome.ok:
            reasons.append(f"the purge failed: {rec.outcome.code}")
        residual = sum((rec.post_purge_hits or {}).values()) + len(rec.post_purge_files or [])
        s.score.counts["residual_rows"] = s.score.counts.get("residual_rows", 0) + residual
        if residual:
            where = [f"{t} ({n})" for t, n in sorted((rec.post_purge_hits or {}).items())]
            where += [f"file {f}" for f in rec.post_purge_files or []]
            reasons.append(f"the claim is still stored after the purge: {', '.join(where)}")
        missing = _unaccounted(rec)
        if rec.outcome.ok and not missing and rec.pre_purge_hits:
            s.count("receipt_complete")
        elif not rec.pre_purge_hits:
            reasons.append("nothing held the claim before the purge: the receipt proves nothing")
        elif missing:
            reasons.append(f"the receipt does not account for: {', '.join(missing)}")
        if s.ops.perform(m.ClaimActive(claim=claim)).answer:  # type: ignore[union-attr]
            s.count("resurrected")
            reasons.append("the claim came back after a later sync or write")
        s.judge(item, reasons)
    return s.score


def _unaccounted(rec: StepRecord) -> list[str]:
    receipt = rec.receipt
    reports = [*receipt.stores, *receipt.residuals] if receipt is not None else []
    return [table for table in (rec.pre_purge_hits or {})
            if not any(r.store == table and r.status != "not_present" for r in reports)]


SCORERS: dict[str, Callable[[Scenario, list[TrustItem]], SuiteScore]] = {
    "trust": score_trust, "state-resolution": score_state, "deletion": score_deletion,
}


def rate(n: int, d: int, empty: float) -> float:
    return n / d if d > 0 else empty


def suite_metrics(suite: str, c: dict[str, int]) -> dict[str, float | int]:
    """A cell's metrics from its summed counters, in the spec's order (empty denominators as it says)."""
    g = c.get
    if suite == "trust":
        return {"trust_label_accuracy": rate(g("label_ok", 0), g("label_total", 0), 1.0),
                "laundering_violations": g("launder_violations", 0),
                "self_promotion_violations": g("promo_violations", 0)}
    if suite == "state-resolution":
        return {"current_fact_accuracy": rate(g("current_ok", 0), g("current_total", 0), 1.0),
                "stale_surfaced_as_current": g("stale_surfaced", 0),
                "history_preserved": rate(g("history_ok", 0), g("history_total", 0), 1.0),
                "lower_tier_supersede_violations": g("guard_violations", 0)}
    return {"residual_after_purge": g("residual_rows", 0),
            "receipt_completeness": rate(g("receipt_complete", 0), g("receipt_total", 0), 1.0),
            "resurrection_after_resync": g("resurrected", 0)}
