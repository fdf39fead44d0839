"""Per-turn evidence (the trace): what crossed the wire on one turn, and why each gold item passed or failed.

One row per (fixture, turn, harness), written as JSON lines beside the result
(``--out`` → ``<stem>.trace.jsonl``) and referenced from ``_meta.trace``.  The
result stays gbrain-shaped and small for foreign runners; the evidence, which
carries injected text, lives in a file a reader can stream or grep.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_serializer

from brainbench.models.corpus import Suite, TurnGold
from brainbench.models.result import FaultClass, Harness

# Injected text is kept up to this many characters; ``context_chars`` keeps the true length.
CONTEXT_CAP = 4000
STDERR_TAIL = 600

VerdictKind = Literal[
    "injected",  # a gold page reached the model
    "quiet",  # nothing injected on a turn that should stay quiet
    "budget",  # resolvable, but ranked past the pointer budget
    "suppressed",  # resolvable, but withheld: already injected, or present in prior context
    "unresolvable",  # no candidate in the turn names the page in this brain
    "not_injected",  # the reference would have injected it; the seam did not
    "fault",  # the seam faulted; the turn was scored as silence
    "other_source",  # injected a page seeded only in another source (isolation)
    "wrong_page",  # injected a page that is neither gold nor acceptable
    "false_fire",  # injected on a turn that should stay quiet
]
PASSING: frozenset[str] = frozenset({"injected", "quiet"})


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ItemVerdict(_Model):
    """One gold (or wrongly injected) page on one turn; ``slug`` is None for a turn-level verdict."""

    slug: str | None
    verdict: VerdictKind
    reason: str
    # False for a page the scorer does not count on its own: on a know-to-ask-only turn one
    # gold page suffices, so a second one left out is explained but is no failure.
    scored: bool = True

    @property
    def passed(self) -> bool:
        return self.verdict in PASSING or not self.scored


class ReferencePick(_Model):
    """A page the reference reflex resolved for this turn, in its rank order, and what became of it."""

    slug: str
    rule: str  # the resolver arm: alias, title, title-surname, slug-suffix, cjk-title
    matched: str  # the normalised candidate that named it
    fate: Literal["injected", "over_budget", "suppressed"]
    rank: int | None = None  # 1-based among the unsuppressed pages, None when suppressed


class TurnTrace(_Model):
    fixture_id: str
    turn_id: int
    harness: Harness
    suites: list[Suite]
    image: str | None = None  # a production image behind the seam: reasons never read its internals
    prompt: str
    prior_messages: int = Field(ge=0, description="Earlier user/assistant messages the seam was handed.")
    prior_injections: int = Field(ge=0, description="Earlier turns of this seam that injected context.")
    context: str | None = Field(description=f"additionalContext as injected, cut at {CONTEXT_CAP} characters.")
    context_chars: int = Field(ge=0)
    injected_slugs: list[str]
    injected_tokens: int | float
    exit_code: int | None
    timed_out: bool = False
    stderr_tail: str = ""
    fault_class: FaultClass | None = None
    fault_detail: str = ""
    latency_ms: float
    gold: TurnGold | None
    verdicts: list[ItemVerdict] = Field(default_factory=list)
    budget: int | None = None  # the reference's pointer budget for this seam
    reference: list[ReferencePick] | None = None  # None: the turn needed no diagnosis

    @field_serializer("gold")
    def _gold_as_authored(self, gold: TurnGold | None) -> dict[str, Any] | None:
        return None if gold is None else gold.model_dump(mode="json", exclude_none=True)

    @property
    def key(self) -> str:
        return f"{self.harness}/{self.fixture_id}#{self.turn_id}"
