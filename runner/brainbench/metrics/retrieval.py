"""know-to-ask and push scoring over turn rows (spec §8), micro-averaged per cell."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from brainbench.models.result import TurnRow


@dataclass
class Score:
    metrics: dict[str, float]
    gold_total: int
    gold_failed: int
    failed_items: list[str] = field(default_factory=list)


def _item(row: TurnRow) -> str:
    # gbrain's item naming: "fixture#turn", plus " (false fire)" / " missing <slug>".
    return f"{row.fixture_id}#{row.turn_id}"


def score_know_to_ask(rows: Sequence[TurnRow]) -> Score:
    retrieve = misses = quiet = false_fires = 0
    failed: list[str] = []
    for row in rows:
        gold = row.gold
        if gold is None:
            continue
        injected = set(row.injected_slugs)
        if gold.should_retrieve:
            retrieve += 1
            wanted = set(gold.gold_slugs or []) | set(gold.acceptable_slugs or [])
            if not injected & wanted:
                misses += 1
                failed.append(_item(row))
        else:
            quiet += 1
            if injected:
                false_fires += 1
                failed.append(f"{_item(row)} (false fire)")
    return Score(
        {
            "know_to_ask_failure_rate": misses / retrieve if retrieve else 0.0,
            "false_fire_rate": false_fires / quiet if quiet else 0.0,
        },
        retrieve + quiet,
        misses + false_fires,
        failed,
    )


def score_push(rows: Sequence[TurnRow]) -> Score:
    injected_total = injected_right = gold_total = hits = 0
    failed: list[str] = []
    for row in rows:
        gold = row.gold
        if gold is None:
            continue
        injected = list(dict.fromkeys(row.injected_slugs))
        if injected:
            right = set(gold.gold_slugs or []) | set(gold.acceptable_slugs or [])
            injected_total += len(injected)
            injected_right += sum(1 for s in injected if s in right)
        if gold.should_retrieve and gold.gold_slugs:
            wanted = list(dict.fromkeys(gold.gold_slugs))
            gold_total += len(wanted)
            for slug in wanted:
                if slug in injected:
                    hits += 1
                else:
                    failed.append(f"{_item(row)} missing {slug}")
    return Score(
        {
            "push_precision": injected_right / injected_total if injected_total else 1.0,
            "push_recall": hits / gold_total if gold_total else 1.0,
        },
        gold_total,
        gold_total - hits,
        failed,
    )


def isolation_violations(rows: Sequence[TurnRow]) -> int:
    return sum(len(r.cross_source_slugs) for r in rows)


def avg_injected_tokens(rows: Sequence[TurnRow]) -> float:
    return sum(r.injected_tokens for r in rows) / len(rows) if rows else 0.0


def failed_items_by_cell(rows: Sequence[TurnRow]) -> dict[str, list[str]]:
    """``harness/suite`` → the gold items that cell failed (know-to-ask and push only)."""
    groups: dict[tuple[str, str], list[TurnRow]] = {}
    for row in rows:
        if row.suite in ("know-to-ask", "push"):
            groups.setdefault((row.harness, row.suite), []).append(row)
    out = {}
    for (harness, suite), mine in groups.items():
        score = score_know_to_ask(mine) if suite == "know-to-ask" else score_push(mine)
        if score.failed_items:
            out[f"{harness}/{suite}"] = score.failed_items
    return out
