"""``brainbench explain`` for memory-trust fixtures: one reason per gold item.

Each item shows its check and verdict, the step it judges (who did what, and what the memory
system answered), the stored row's tier, and what each explicit read surface said; a purge
also shows what the runner's own scans found before and after it.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Group
from rich.markup import escape
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from brainbench.models.trust_run import ItemVerdict, StepRecord, TrustFixtureScore


def find(scores: Sequence[TrustFixtureScore], target: str) -> tuple[TrustFixtureScore, str | None] | None:
    """The trust fixture ``FIXTURE`` or ``FIXTURE#ITEM`` names, with the item id (or None)."""
    fixture, sep, item = target.partition("#")
    for score in scores:
        if score.fixture_id == fixture:
            return score, (item.strip() or None) if sep else None
    return None


def verdicts(score: TrustFixtureScore, item: str | None, harness: str | None) -> list[ItemVerdict]:
    groups = [score.shared] if score.shared else []
    # An image graded through its own operations command (seed contract v2).
    groups += [s for h, s in score.by_harness.items() if harness is None or h == harness]
    groups += [s for h, s in score.protections.items() if harness is None or h == harness]
    groups += [s for h, s in score.default.items() if harness is None or h == harness]
    return [v for g in groups if g for v in g.verdicts if item is None or v.item_id == item]


def _step_line(rec: StepRecord | None) -> Text:
    if rec is None:
        return Text("the step never ran", style="red")
    out = rec.outcome
    line = f"{rec.actor} · {rec.op} → " + ("ok" if out.ok else f"refused: {out.code}")
    if out.message and not out.ok:
        line += f" ({out.message})"
    if rec.target is not None:
        line += f" · target {rec.target} ({rec.target_tier_before or 'none'} → {rec.target_tier_after or 'none'})"
    if rec.unsettled:
        line += " · effects did not settle"
    return Text(line, style="" if out.ok else "yellow")


def render_item(score: TrustFixtureScore, v: ItemVerdict) -> Panel:
    # An image-seeded seam's steps are its own (seed contract v2): "<arm>:<harness>".
    steps = score.steps.get(f"{v.arm}:{v.harness}") or score.steps.get(v.arm, [])
    rec = next((r for r in steps if r.step_id == v.step), None)
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="bold")
    grid.add_column()
    grid.add_row("step", _step_line(rec))
    grid.add_row("stored", v.stored_tier or "no row")
    if v.surfaces:
        grid.add_row("reads", ", ".join(f"{k}: {t}" for k, t in v.surfaces.items()))
    if rec is not None and rec.purged_claim is not None:
        grid.add_row("claim", escape(rec.purged_claim))
        grid.add_row("before", escape(str(rec.pre_purge_hits or {})))
        grid.add_row("after", escape(f"{rec.post_purge_hits or {}} files {rec.post_purge_files or []}"))
        if rec.receipt is not None:
            grid.add_row("receipt", escape(", ".join(f"{s.store}: {s.status}" for s in rec.receipt.stores)))
    reasons = v.reasons or ["as expected"]
    grid.add_row("why", Text("\n".join(reasons), style="red" if v.reasons else "green"))
    where = f" · {v.harness}" if v.harness else ""
    title = f"{score.fixture_id} · {v.item_id} {v.check}@{v.step} · {v.arm}{where} · {'pass' if v.passed else 'FAIL'}"
    return Panel(Group(grid), title=title, title_align="left", border_style="green" if v.passed else "red")
