"""Markdown for the gate: the scoreboard's gate section and the PR delta.

Spec §9.2 (gate section of ``renderScoreboardMarkdown``) and §9.3
(``scripts/render-brainbench-delta.ts``), extended with main → HEAD columns so a
reviewer sees what moved without opening two files.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from brainbench.gate.compare import GATED_METRICS, failed_items, newly_failed_items
from brainbench.jsjson import js_number, round4
from brainbench.models.baseline import Baseline

if TYPE_CHECKING:
    from brainbench.models.result import CompareOutcome, RunResult

__all__ = [
    "HEADLINE_METRICS",
    "gate_section_lines",
    "render_delta",
    "render_gate_section",
]

HEADLINE_METRICS: dict[str, str] = {
    "know-to-ask": "know_to_ask_failure_rate",
    "push": "push_recall",
    "write-back": "write_back_fidelity",
    "continuity": "continuity_rate",
    "trust": "trust_label_accuracy",
    "state-resolution": "current_fact_accuracy",
    "poisoning": "poison_activation_rate",
    "deletion": "residual_after_purge",
}

# Long lists drown the summary; the full set is in the --out artifact's turn rows.
MAX_ITEMS_PER_CELL = 25


def _fmt(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return js_number(value)


def _cell_text(text: str) -> str:
    # A literal pipe would split the table cell.
    return text.replace("|", "\\|").replace("\n", " ")


def gate_section_lines(outcome: CompareOutcome) -> list[str]:
    """``## Gate: <VERDICT> (<mode>)``, note bullets, then the breach table if any.

    The caller puts a blank line before (and after) these lines.
    """
    lines = [f"## Gate: {outcome.verdict.upper()} ({outcome.mode})"]
    lines.extend(f"- {note}" for note in outcome.notes)
    if outcome.breaches:
        lines.append("")
        lines.append("| cell | metric | main | current | detail |")
        lines.append("|---|---|---|---|---|")
        for b in outcome.breaches:
            lines.append(
                f"| {b.cell} | {b.metric} | {_fmt(b.main)} | {_fmt(b.current)} | {_cell_text(b.detail)} |"
            )
    return lines


def render_gate_section(outcome: CompareOutcome) -> str:
    """The gate section as text (newline-terminated); the scoreboard puts the blank line before it."""
    return "\n".join(gate_section_lines(outcome)) + "\n"


# --- the PR delta --------------------------------------------------------------------

class _Side:
    """Per-cell metrics and counts of either a run result or a baseline."""

    def __init__(self, doc: RunResult | Baseline) -> None:
        self.metrics: dict[str, dict[str, float | int]] = {}
        self.counts: dict[str, tuple[int, int]] = {}
        self.seams: dict[str, str] = {}
        if isinstance(doc, Baseline):
            self.fixtures_hash = doc.fixtures_hash
            self.metrics = {k: dict(v) for k, v in doc.cells.items()}
            self.counts = {k: (c.gold_failed, c.gold_total) for k, c in doc.counts.items()}
        else:
            self.fixtures_hash = doc.receipt.fixtures_hash
            for cell in doc.cells:
                key = f"{cell.harness}/{cell.suite}"
                self.metrics[key] = {n: round4(v) for n, v in cell.metrics.items()}
                self.counts[key] = (cell.gold_failed, cell.gold_total)
                self.seams[key] = cell.seam


def _move(before: float | int, after: float | int, direction: str | None) -> str:
    """``a → b`` with an arrow for the direction and a word for better/worse."""
    if before == after:
        return f"{_fmt(after)} (=)"
    arrow = "↑" if after > before else "↓"
    if direction is None:
        judgement = "ungated"
    else:
        better = after < before if direction == "lower" else after > before
        judgement = "better" if better else "worse"
    return f"{_fmt(before)} → {_fmt(after)} {arrow} {judgement}"


def render_delta(main: RunResult | Baseline | None, head: RunResult, report_url: str | None = None) -> str:
    """Markdown for a PR comment / ``$GITHUB_STEP_SUMMARY``.

    ``main`` may be main's run result, main's baseline, or ``None`` (just HEAD, as
    gbrain's renderer does).  Each newly failed item is listed once, with its reason
    from HEAD's trace and, given ``report_url``, a link to its turn in the HTML report.
    The verdict comes from HEAD's ``compare`` block; a run without one is the
    initial landing of the gate.
    """
    outcome = head.meta.compare
    verdict = outcome.verdict.upper() if outcome else "NO GATE (initial landing)"
    mode = outcome.mode if outcome else "ungated"
    cur = _Side(head)
    ref = _Side(main) if main is not None else None

    lines = [f"## BrainBench: {verdict}", ""]
    fixtures = f"fixtures `{cur.fixtures_hash[:12]}`"
    if ref is not None and ref.fixtures_hash != cur.fixtures_hash:
        fixtures += f" (main `{ref.fixtures_hash[:12]}`)"
    lines.append(f"{fixtures} · {mode}")
    lines.append("")
    lines.append("| harness | seam | suite | failed/gold | headline |")
    lines.append("|---|---|---|---|---|")

    keys = [f"{c.harness}/{c.suite}" for c in head.cells]
    if ref is not None:
        keys += [k for k in ref.counts if k not in cur.counts]
    moved: list[str] = []
    for key in keys:
        harness, _, suite = key.partition("/")
        seam = cur.seams.get(key) or (ref.seams.get(key) if ref else None) or "—"
        headline_name = HEADLINE_METRICS.get(suite)
        if key not in cur.counts:
            lines.append(f"| {harness} | {seam} | {suite} | missing in HEAD | — |")
            continue
        failed, total = cur.counts[key]
        metrics = cur.metrics[key]
        old_counts = ref.counts.get(key) if ref else None
        old_metrics = ref.metrics.get(key, {}) if ref else {}
        if old_counts is None:
            counts_text = f"{failed}/{total}" + (" (new cell)" if ref is not None else "")
        elif old_counts == (failed, total):
            counts_text = f"{failed}/{total} (=)"
        else:
            arrow = "↑" if failed > old_counts[0] else ("↓" if failed < old_counts[0] else "")
            judgement = "worse" if failed > old_counts[0] else ("better" if failed < old_counts[0] else "")
            counts_text = f"{old_counts[0]}/{old_counts[1]} → {failed}/{total} {arrow} {judgement}".rstrip()
        headline = "—"
        if headline_name and headline_name in metrics:
            value = metrics[headline_name]
            if headline_name in old_metrics:
                headline = f"{headline_name}=" + _move(old_metrics[headline_name], value,
                                                       GATED_METRICS.get(headline_name))
            else:
                headline = f"{headline_name}={_fmt(value)}"
        lines.append(f"| {harness} | {seam} | {suite} | {counts_text} | {headline} |")
        for name in sorted(set(metrics) & set(old_metrics)):
            if name != headline_name and metrics[name] != old_metrics[name]:
                change = _move(old_metrics[name], metrics[name], GATED_METRICS.get(name))
                moved.append(f"- `{key}` {name}: {change}")

    if moved:
        lines += ["", "**Other metrics that moved**", *moved]

    items_block = _newly_failed_block(main, head, cur, ref, report_url)
    if items_block:
        lines += ["", *items_block]

    if outcome is not None:
        # The gate's notes name failing items too; once is enough when the block above lists them.
        notes = [n for n in outcome.notes
                 if not (items_block and n.startswith(("newly-failed items in ", "failing items now ")))]
        if notes:
            lines += ["", "**Gate notes**", *(f"- {note}" for note in notes)]
        if outcome.breaches:
            lines += ["", "| cell | metric | main | current | detail |", "|---|---|---|---|---|"]
            lines += [
                f"| {b.cell} | {b.metric} | {_fmt(b.main)} | {_fmt(b.current)} | {_cell_text(b.detail)} |"
                for b in outcome.breaches
            ]
    if head.seed_failures:
        lines += [
            "",
            f"**SEED FAILURES ({len(head.seed_failures)})** — run is invalid (exit 2): "
            + ", ".join(f.fixture_id for f in head.seed_failures),
        ]
    return "\n".join(lines) + "\n"


def _newly_failed_block(
    main: RunResult | Baseline | None, head: RunResult, cur: _Side, ref: _Side | None, report_url: str | None = None
) -> list[str]:
    if main is not None and not isinstance(main, Baseline):
        items = newly_failed_items(head, main)
        title = "**Newly failed gold items** (failing in HEAD, passing on main)"
    else:
        # Only counts are known for main: name every item failing now in the cells
        # whose failure count grew (for a cell clean on main, exactly the new ones).
        grown = set()
        for key, (failed, _total) in cur.counts.items():
            old = ref.counts.get(key) if ref else None
            if old is not None and failed > old[0]:
                grown.add(key)
        if ref is None and head.meta.compare is not None:
            grown = {b.cell for b in head.meta.compare.breaches if b.metric == "gold_failed"}
        now = failed_items(head)
        items = {k: v for k, v in now.items() if k in grown}
        title = "**Failed gold items in cells that lost items**"
    if not items:
        return []
    from brainbench.report.reasons import item_reasons

    reasons = {(r.cell, r.item): r for r in item_reasons(head, items)} if head.trace else {}
    lines = [title]
    for key in sorted(items):
        names = items[key]
        for name in names[:MAX_ITEMS_PER_CELL]:
            r = reasons.get((key, name))
            why = f" — {r.verdict}: {_cell_text(r.reason)}" if r is not None else ""
            if r is not None and report_url:
                why += f" ([turn]({report_url}#{r.anchor}))"
            lines.append(f"- `{key}`: `{name}`{why}")
        if len(names) > MAX_ITEMS_PER_CELL:
            lines.append(f"- `{key}`: … and {len(names) - MAX_ITEMS_PER_CELL} more (all in the --out trace)")
    return lines
