"""Write-back and continuity: what flows through the extraction seam and what scoring returns.

``SegmentInput`` and ``ExtractedFact`` are the extractor contract (spec §6.2);
the score models are per-fixture / per-pair results and their aggregate (§6.3,
§6.4, §7).  Metrics are raw ratios; rounding (round4) belongs to cell assembly.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from brainbench.models.corpus import FactKind


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SegmentInput(_Model):
    """One conversation segment as an extractor sees it."""

    text: str = Field(description="renderSegmentForExtraction output (header + one line per message).")
    source: str = Field(description="Brain source the facts will land in.")
    session_id: str
    page_slug: str
    page_title: str
    start_iso: str
    end_iso: str
    participants: list[str]
    message_count: int


class ExtractedFact(_Model):
    fact: str
    kind: FactKind = "fact"
    entity_slug: str | None = None
    source: str
    confidence: float = 1.0
    notability: str = "medium"


class WriteBackScore(_Model):
    """One fixture's write-back result (gbrain ``WriteBackFixtureScore``)."""

    fixture_id: str
    page_slug: str
    source_id: str
    gold_total: int = Field(ge=0)
    gold_failed: int = Field(ge=0)
    survived: int = Field(ge=0)
    provenance_ok: int = Field(ge=0)
    stored_rows: int = Field(ge=0)
    matched_any_gold: int = Field(ge=0)
    failed_items: list[str]
    # Pipeline facts, for reports and debugging; not part of any metric.
    segments: int = Field(ge=0, default=0)
    facts_inserted: int = Field(ge=0, default=0)
    receipt_slug: str | None = None
    cost_usd: float = 0.0

    def metrics(self) -> dict[str, float]:
        return WriteBackAggregate.of([self]).metrics(llm=False)


class WriteBackAggregate(_Model):
    """Σ over fixtures, as ``harness.ts: accumulateWriteBack`` keeps it; one cell per harness, same numbers."""

    fixtures: list[str]
    gold_total: int = 0
    gold_failed: int = 0
    survived: int = 0
    provenance_ok: int = 0
    stored_rows: int = 0
    matched_any_gold: int = 0
    failed_items: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, scores: Iterable[WriteBackScore]) -> WriteBackAggregate:
        items = list(scores)
        return cls(
            fixtures=[s.fixture_id for s in items],
            gold_total=sum(s.gold_total for s in items),
            gold_failed=sum(s.gold_failed for s in items),
            survived=sum(s.survived for s in items),
            provenance_ok=sum(s.provenance_ok for s in items),
            stored_rows=sum(s.stored_rows for s in items),
            matched_any_gold=sum(s.matched_any_gold for s in items),
            failed_items=[f for s in items for f in s.failed_items],
        )

    def metrics(self, *, llm: bool) -> dict[str, float]:
        """Unrounded metrics in gbrain's key order; extraction_* only exist in --llm runs."""
        fidelity = self.survived / self.gold_total if self.gold_total else 1.0
        out = {
            "write_back_fidelity": fidelity,
            "provenance_accuracy": self.provenance_ok / self.survived if self.survived else 1.0,
        }
        if llm:
            out["extraction_recall"] = fidelity
            out["extraction_precision"] = self.matched_any_gold / self.stored_rows if self.stored_rows else 1.0
        return out


class ContinuityScore(_Model):
    """One (pair, harness) probe result (gbrain ``scoreContinuityPair``)."""

    pair_id: str
    reader_fixture_id: str
    gold_total: int = Field(ge=0)
    gold_failed: int = Field(ge=0)
    hits: dict[str, bool]
    failed_items: list[str]


class ContinuityAggregate(_Model):
    """Σ over the pairs one harness read."""

    pairs: list[str]
    gold_total: int = 0
    gold_failed: int = 0
    failed_items: list[str] = Field(default_factory=list)

    @classmethod
    def of(cls, scores: Iterable[ContinuityScore]) -> ContinuityAggregate:
        items = list(scores)
        return cls(
            pairs=[s.pair_id for s in items],
            gold_total=sum(s.gold_total for s in items),
            gold_failed=sum(s.gold_failed for s in items),
            failed_items=[f for s in items for f in s.failed_items],
        )

    def continuity_rate(self) -> float:
        return (self.gold_total - self.gold_failed) / self.gold_total if self.gold_total else 1.0
