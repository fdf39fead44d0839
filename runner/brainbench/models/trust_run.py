"""What a memory-trust fixture's run leaves behind: a record per step, and the verdict per gold item.

A step record is what the scorer reads (trust spec §2.3–§2.6): the step's outcome as the memory
system answered it, the row it acted on with its tier before and after, where a write went,
and for a purge the claim and the independent scans of every store before and after.  An item
verdict is what ``explain`` and the HTML report show: pass or fail, and why, with the stored
row and what each read surface said.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from brainbench.models.memory import PurgeReceipt, RowRef
from brainbench.models.trust import TrustCheck, TrustTier

Arm = Literal["protections", "default"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StepOutcome(_Model):
    ok: bool
    code: str | None = None
    message: str | None = None


class StepRecord(_Model):
    step_id: str
    actor: str
    op: str
    outcome: StepOutcome = Field(default_factory=lambda: StepOutcome(ok=False, code="not_run"))
    target: RowRef | None = None
    target_tier_before: TrustTier | None = None
    target_tier_after: TrustTier | None = None
    page_slug: str | None = None
    page_source: str | None = None
    fact_id: int | None = None
    # A purge: the claim, its receipt, and the independent scans (table → rows holding the claim).
    purged_claim: str | None = None
    receipt: PurgeReceipt | None = None
    pre_purge_hits: dict[str, int] | None = None
    post_purge_hits: dict[str, int] | None = None
    post_purge_files: list[str] | None = None
    unsettled: bool = False


class ItemVerdict(_Model):
    """One gold item of a trust fixture, judged (per harness for poisoning, once otherwise)."""

    fixture_id: str
    item_id: str
    check: TrustCheck
    step: str
    arm: Arm = "protections"
    harness: str | None = None
    passed: bool
    reasons: list[str] = Field(default_factory=list)
    outcome: StepOutcome | None = None
    stored_tier: TrustTier | None = None
    # What each explicit read surface reported for the row (absent: the surface did not return it).
    surfaces: dict[str, TrustTier] = Field(default_factory=dict)


class SuiteScore(_Model):
    """One fixture's (or a whole cell's) counts, in the spec's counter names."""

    counts: dict[str, int] = Field(default_factory=dict)
    gold_total: int = 0
    gold_failed: int = 0
    verdicts: list[ItemVerdict] = Field(default_factory=list)

    def add(self, other: SuiteScore) -> SuiteScore:
        counts = dict(self.counts)
        for k, v in other.counts.items():
            counts[k] = counts.get(k, 0) + v
        return SuiteScore(counts=counts, gold_total=self.gold_total + other.gold_total,
                          gold_failed=self.gold_failed + other.gold_failed, verdicts=[*self.verdicts, *other.verdicts])


class TrustFixtureScore(_Model):
    """Everything a trust fixture contributes to its suite's cells."""

    fixture_id: str
    suite: str
    # trust, state-resolution, deletion: one score for every harness.
    shared: SuiteScore | None = None
    # trust, state-resolution, deletion of an image-seeded seam (seed contract v2): its own store's score.
    by_harness: dict[str, SuiteScore] = Field(default_factory=dict)
    # poisoning: per harness, the protections arm and (when it ran) the default-mode arm.
    protections: dict[str, SuiteScore] = Field(default_factory=dict)
    default: dict[str, SuiteScore] = Field(default_factory=dict)
    # arm → records, for explain; an image-seeded seam's steps under "<arm>:<harness>".
    steps: dict[str, list[StepRecord]] = Field(default_factory=dict)
