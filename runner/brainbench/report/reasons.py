"""Join the scorer's failed items ("fx#3 missing slug", "fx#2 (false fire)") to the trace's reasons."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from brainbench.metrics.retrieval import failed_items_by_cell
from brainbench.models.result import RunResult
from brainbench.models.trace import TurnTrace


@dataclass(frozen=True)
class ItemReason:
    cell: str  # harness/suite
    item: str  # the scorer's item name
    harness: str
    fixture_id: str
    turn_id: int
    verdict: str
    reason: str

    @property
    def anchor(self) -> str:
        """The report's fragment for this turn (``index.html#turn=…``)."""
        return f"turn={self.harness}/{self.fixture_id}/{self.turn_id}"


def traces_by_turn(traces: Iterable[TurnTrace]) -> dict[tuple[str, str, int], TurnTrace]:
    return {(t.harness, t.fixture_id, t.turn_id): t for t in traces}


def parse_item(item: str) -> tuple[str, int, str | None, bool]:
    """(fixture_id, turn_id, missing slug or None, false fire?) of a scorer item name."""
    head, _, missing = item.partition(" missing ")
    false_fire = head.endswith(" (false fire)")
    head = head.removesuffix(" (false fire)")
    fixture, _, turn = head.rpartition("#")
    return fixture, int(turn), missing or None, false_fire


def reason_for(trace: TurnTrace | None, missing: str | None, false_fire: bool) -> tuple[str, str]:
    if trace is None:
        return "unknown", "no trace for this turn (the result was written without one)"
    failing = [v for v in trace.verdicts if not v.passed]
    if missing is not None:
        failing = [v for v in failing if v.slug == missing]
    elif false_fire:
        failing = [v for v in failing if v.verdict in ("false_fire", "other_source")]
    if not failing:
        return "unknown", "no failing verdict recorded for this item"
    first = failing[0]
    if missing is None and not false_fire and first.slug:
        return first.verdict, f"`{first.slug}`: {first.reason}"
    return first.verdict, first.reason


def item_reasons(result: RunResult, only: dict[str, Sequence[str]] | None = None) -> list[ItemReason]:
    """Every failed know-to-ask/push item (or those in ``only``: cell → items) with its reason."""
    items = only if only is not None else failed_items_by_cell(result.turn_rows)
    traces = traces_by_turn(result.trace)
    out = []
    for cell in sorted(items):
        harness = cell.partition("/")[0]
        for item in items[cell]:
            try:
                fixture, turn, missing, false_fire = parse_item(item)
            except ValueError:
                continue
            verdict, reason = reason_for(traces.get((harness, fixture, turn)), missing, false_fire)
            out.append(ItemReason(cell, item, harness, fixture, turn, verdict, reason))
    return out
