"""The scoreboard: gbrain's markdown layout (spec §9.2) and a rich table for terminals."""

from __future__ import annotations

from collections.abc import Sequence

from brainbench.jsjson import js_number
from brainbench.models.result import Cell, NotApplicable, RunResult, SeamInfo

# gbrain 0.60's METRIC_ORDER (trust spec §4.7): 31 columns, the memory-trust metrics before isolation.
COLUMNS = (
    "know_to_ask_failure_rate", "false_fire_rate", "push_precision", "push_recall", "write_back_fidelity",
    "provenance_accuracy", "continuity_rate", "extraction_recall", "extraction_precision",
    "trust_label_accuracy", "laundering_violations", "self_promotion_violations",
    "current_fact_accuracy", "stale_surfaced_as_current", "history_preserved", "lower_tier_supersede_violations",
    "poison_persist_rate", "flagged_and_labeled_rate", "unconfirmed_preference_activation_rate",
    "agent_relayed_activation_rate", "poison_activation_rate", "benign_retention", "false_quarantine_rate",
    "default_persist_unlabeled_rate", "default_activation_unlabeled_rate", "default_benign_retention",
    "residual_after_purge", "receipt_completeness", "resurrection_after_resync",
    "source_isolation_violations", "avg_injected_tokens",
)
# gbrain's footer, pointing at our own explanation (gbrain's pointed at its docs/eval/BRAINBENCH.md).
SEAM_NOTE = (
    "_seam: `production` rows exercise a shipped integration seam; `contract` rows grade the same gbrain "
    "primitives through a harness-shaped injection contract. How to read this table, columns, symbols and "
    "gates: docs/SCOREBOARD.md._"
)


def _value(cell: Cell, name: str) -> str:
    value = cell.metrics.get(name)
    return "—" if value is None else js_number(value)


def _fault_lines(result: RunResult) -> list[str]:
    if not result.meta.faults:
        return []
    counts: dict[tuple[str, str], int] = {}
    for f in result.meta.faults:
        counts[(f.harness, f.fault_class)] = counts.get((f.harness, f.fault_class), 0) + 1
    lines = ["", f"**SEAM FAULTS ({len(result.meta.faults)})** — affected turns were scored as silence (exit 2):"]
    lines += [f"- {h}: {cls} × {n}" for (h, cls), n in sorted(counts.items())]
    return lines


def describe_seam(seam: SeamInfo) -> str:
    """What ran behind one seam, as the scoreboard, the HTML report and ``explain`` name it."""
    how = f"{seam.seam}, {seam.executor}, {seam.mode}"
    if seam.image is None:
        return f"{seam.harness} ({how}): no image"
    digest = f" `{seam.image_digest}`" if seam.image_digest else " (digest unknown)"
    return f"{seam.harness} ({how}): `{seam.image}`{digest}"


def graded_images(result: RunResult, harnesses: Sequence[str] | None = None) -> list[str]:
    """One line per seam that ran an image (``harnesses``: only these), empty when none did."""
    seams = result.meta.run.seams if result.meta.run else []
    if not any(s.image for s in seams):
        return []
    return [describe_seam(s) for s in seams if harnesses is None or s.harness in harnesses]


def _with_not_applicable(result: RunResult) -> list[Cell | NotApplicable]:
    """The cells, each harness's not-applicable rows right after its last cell (or at the end)."""
    cells = list(result.cells)
    last = {c.harness: i for i, c in enumerate(cells)}
    out: list[Cell | NotApplicable] = []
    for i, c in enumerate(cells):
        out.append(c)
        if last[c.harness] == i:
            out += [na for na in result.meta.not_applicable if na.harness == c.harness]
    return out + [na for na in result.meta.not_applicable if na.harness not in last]


def render_markdown(result: RunResult, gate_section: str | None = None) -> str:
    r = result.receipt
    holdout = "holdout INCLUDED (published-run mode)" if r.include_holdout else "holdout excluded (gate mode)"
    mode = "LLM extractor" if r.llm else "deterministic (hermetic)"
    header = ["harness", "seam", "suite", "failed/gold", *(f"`{c}`" for c in COLUMNS)]
    fresh = result.meta.fresh_corpus
    if fresh is not None:
        withheld = f"seed withheld, commitment `{fresh.commitment[:12]}`"
        seed = f"seed {fresh.seed}" if fresh.seed is not None else withheld
        mode += f" · fresh corpus ({seed})"
    lines = [
        "# BrainBench scoreboard",
        "",
        f"fixtures `{r.fixtures_hash[:12]}` · {holdout} · {mode}",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
    ]
    seams = {i.harness: i.seam for i in result.meta.run.seams} if result.meta.run else {}
    dashes = " | ".join("—" for _ in COLUMNS)
    for c in _with_not_applicable(result):
        if isinstance(c, NotApplicable):
            lines.append(f"| {c.harness} | {seams.get(c.harness, 'production')} | {c.suite} | n/a | {dashes} |")
            continue
        values = [_value(c, name) for name in COLUMNS]
        lines.append(f"| {c.harness} | {c.seam} | {c.suite} | {c.gold_failed}/{c.gold_total} | " + " | ".join(values)
                     + " |")
    lines += ["", SEAM_NOTE]
    images = graded_images(result)
    if images:
        # Which build was graded: an image name alone can be rebuilt under the same tag.
        lines += ["", "_Images graded (seam, executor, mode: image and digest):_", *(f"- {i}" for i in images)]
    if result.meta.not_applicable:
        reasons = sorted({na.reason for na in result.meta.not_applicable})
        lines += ["", "_n/a: not applicable, not scored and not counted as failures — " + "; ".join(reasons) + "._"]
    if result.seed_failures:
        lines += ["", f"**SEED FAILURES ({len(result.seed_failures)})** — run is invalid (exit 2):"]
        lines += [f"- {f.fixture_id}: {f.error}" for f in result.seed_failures]
    lines += _fault_lines(result)
    if result.meta.run is not None and not result.meta.run.complete:
        lines += ["", f"**INCOMPLETE RUN** — interrupted by {result.meta.run.interrupted_by}; partial numbers."]
    if gate_section:
        lines += ["", gate_section.rstrip("\n")]
    return "\n".join(lines) + "\n\n"


def render_table(result: RunResult, shown: Sequence[str] = COLUMNS) -> object:
    """A rich Table for terminals (same numbers, fewer columns: only those any cell has)."""
    from rich.table import Table

    present = [c for c in shown if any(c in cell.metrics for cell in result.cells)]
    table = Table(title=f"BrainBench · fixtures {result.receipt.fixtures_hash[:12]}", show_lines=False)
    for col in ("harness", "seam", "suite", "failed/gold", *present):
        table.add_column(col, justify="right" if col not in ("harness", "seam", "suite") else "left")
    seams = {i.harness: i.seam for i in result.meta.run.seams} if result.meta.run else {}
    for c in _with_not_applicable(result):
        if isinstance(c, NotApplicable):  # never scored: the reason is in the markdown and the result
            table.add_row(c.harness, seams.get(c.harness, "production"), c.suite, "n/a", *("—" for _ in present))
        else:
            table.add_row(c.harness, c.seam, c.suite, f"{c.gold_failed}/{c.gold_total}",
                          *(_value(c, n) for n in present))
    return table
