"""The HTML report: one self-contained ``index.html`` that works from ``file://`` with the network off.

Everything is inlined: the run's data as JSON, our own small script and
stylesheet, and Chart.js (vendored from npm under ``report/assets`` with its MIT
licence).  A Content-Security-Policy forbids every fetch, so a report never
phones home and injected text from a hostile seam cannot load anything; the
script only ever sets that text with ``textContent``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from brainbench.metrics.retrieval import failed_items_by_cell
from brainbench.models.baseline import Baseline
from brainbench.models.result import RunResult
from brainbench.report.files import atomic_write
from brainbench.report.phases import HEADER, rows, summary_line
from brainbench.report.reasons import item_reasons
from brainbench.report.scoreboard import graded_images

HEADLINE = {"know-to-ask": "know_to_ask_failure_rate", "push": "push_recall",
            "write-back": "write_back_fidelity", "continuity": "continuity_rate",
            "trust": "trust_label_accuracy", "state-resolution": "current_fact_accuracy",
            "poisoning": "poison_activation_rate", "deletion": "residual_after_purge"}
_CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; "
        "connect-src 'none'; base-uri 'none'; form-action 'none'")


def load_side(path: Path) -> RunResult | Baseline:
    """A run result (with its trace) or a committed baseline, told apart by their keys."""
    from pydantic import ValidationError

    from brainbench.report.trace_file import TraceFileError, load_result

    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text)
    except (OSError, json.JSONDecodeError) as exc:
        raise TraceFileError(f"{path}: cannot read a result or baseline: {exc}") from exc
    if isinstance(data, dict) and "receipt" in data:
        return load_result(path)
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise TraceFileError(f"{path}: neither a result nor a baseline: {where}: {first['msg']}") from exc


def _side_counts(doc: RunResult | Baseline) -> dict[str, dict[str, Any]]:
    if isinstance(doc, Baseline):
        return {k: {"failed": doc.counts[k].gold_failed if k in doc.counts else None,
                    "total": doc.counts[k].gold_total if k in doc.counts else None, "metrics": dict(v)}
                for k, v in doc.cells.items()}
    return {f"{c.harness}/{c.suite}": {"failed": c.gold_failed, "total": c.gold_total, "metrics": dict(c.metrics)}
            for c in doc.cells}


def newly_failed(head: RunResult, base: RunResult | Baseline) -> dict[str, list[str]]:
    """Items failing now and not in ``base``; against a counts-only baseline, every failing item of a
    cell whose failure count grew (for a cell clean in the baseline, exactly the new ones)."""
    now = failed_items_by_cell(head.turn_rows)
    if isinstance(base, RunResult):
        before = failed_items_by_cell(base.turn_rows)
        out = {k: [i for i in v if i not in set(before.get(k, ()))] for k, v in now.items()}
        return {k: v for k, v in out.items() if v}
    counts = _side_counts(base)
    grown = {c.harness + "/" + c.suite for c in head.cells
             if (counts.get(f"{c.harness}/{c.suite}") or {}).get("failed") is not None
             and c.gold_failed > counts[f"{c.harness}/{c.suite}"]["failed"]}
    return {k: v for k, v in now.items() if k in grown}


def report_data(result: RunResult, baseline: RunResult | Baseline | None = None) -> dict[str, Any]:
    cells = []
    for c in result.cells:
        name = HEADLINE.get(c.suite)
        cells.append({"key": f"{c.harness}/{c.suite}", "harness": c.harness, "suite": c.suite, "seam": c.seam,
                      "gold_total": c.gold_total, "gold_failed": c.gold_failed, "metrics": c.metrics,
                      "headline": name, "fixtures": c.fixtures})
    base: dict[str, Any] | None = None
    if baseline is not None:
        fresh = newly_failed(result, baseline)
        base = {"kind": "baseline" if isinstance(baseline, Baseline) else "result",
                "cells": _side_counts(baseline),
                "newly_failed": [_reason_dict(r) for r in item_reasons(result, fresh)]}
    receipt = result.receipt
    run = result.meta.run
    return {
        "receipt": {"fixtures_hash": receipt.fixtures_hash, "harness_sha": receipt.harness_sha, "ts": receipt.ts,
                    "include_holdout": receipt.include_holdout, "llm": receipt.llm},
        "run": {"run_id": run.run_id, "executor": run.executor,
                "seams": [s.model_dump(mode="json") for s in run.seams]} if run else None,
        "cells": cells,
        "failed": [_reason_dict(r) for r in item_reasons(result)],
        "turns": [t.model_dump(mode="json") for t in result.trace],
        "faults": [f.model_dump(mode="json") for f in result.meta.faults],
        "seed_failures": [f.model_dump(mode="json") for f in result.seed_failures],
        "not_applicable": [n.model_dump(mode="json") for n in result.meta.not_applicable],
        "glossary": result.meta.metric_glossary,
        "baseline": base,
        "trust_items": trust_items(result),
    }


def trust_items(result: RunResult) -> list[dict[str, Any]]:
    """Every memory-trust gold item with its verdict, keyed to the cells it counts in."""
    harnesses = list(dict.fromkeys(c.harness for c in result.cells))
    out: list[dict[str, Any]] = []
    for score in result.meta.trust:
        steps = {arm: {r.step_id: r for r in recs} for arm, recs in score.steps.items()}
        groups = [(h, score.shared) for h in harnesses] if score.shared else []
        groups += [*score.protections.items(), *score.default.items()]
        for harness, group in groups:
            for v in group.verdicts:
                rec = steps.get(v.arm, {}).get(v.step)
                out.append({"cell": f"{harness}/{score.suite}", "harness": harness, "fixture": v.fixture_id,
                            "item": v.item_id, "check": v.check, "step": v.step, "arm": v.arm, "passed": v.passed,
                            "reasons": v.reasons, "stored": v.stored_tier, "surfaces": v.surfaces,
                            "outcome": (f"{rec.actor} · {rec.op} → " + ("ok" if rec.outcome.ok
                                        else f"refused: {rec.outcome.code}")) if rec else "never ran"})
    return out


def _reason_dict(r: Any) -> dict[str, Any]:
    return {"cell": r.cell, "item": r.item, "harness": r.harness, "fixture": r.fixture_id, "turn": r.turn_id,
            "verdict": r.verdict, "reason": r.reason}


def _asset(name: str) -> str:
    return resources.files("brainbench.report").joinpath("assets", name).read_text(encoding="utf-8")


def _script_json(data: Mapping[str, Any]) -> str:
    # Inside <script>, "</" would end the element early; \u003c keeps the JSON identical.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")


def gate_line(result: RunResult) -> tuple[str, str]:
    """(css class, text) of the gate verdict the run reached, or why it has none."""
    outcome = result.meta.compare
    if outcome is None:
        return "gate-none", "Gate: not gated (the run had no --compare BASELINE)"
    text = f"Gate: {outcome.verdict.upper()} ({outcome.mode})"
    if outcome.breaches:
        text += f" · {len(outcome.breaches)} breach{'es' if len(outcome.breaches) != 1 else ''}: " + "; ".join(
            f"{b.cell} {b.metric} {b.main} → {b.current}" for b in outcome.breaches[:5])
    if outcome.notes:
        text += " · " + "; ".join(outcome.notes[:3])
    return f"gate-{outcome.verdict}", text


def graded_lines(result: RunResult) -> list[str]:
    """The images behind the seams (with digests), or what ran instead."""
    images = graded_images(result)
    if images:
        return [i.replace("`", "") for i in images]
    run = result.meta.run
    kinds = sorted({s.executor for s in run.seams}) if run else []
    return [f"Seams: {', '.join(kinds) or 'unknown'} processes, no images"] if run else []


def phases_table(result: RunResult) -> str:
    """Where the run's wall time went per seam (``_meta.phases``): static, like the gate line."""
    phases = result.meta.phases
    if phases is None:
        return ""
    head = "".join(f"<th scope=\"col\">{escape(name)}</th>" for name in HEADER)
    body = "".join("<tr>" + "".join(f"<td>{escape(cell)}</td>" for cell in row) + "</tr>" for row in rows(phases))
    return (f'<details id="phases"><summary>Phases: {escape(summary_line(phases))}</summary>'
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></details>")


def render_html(data: Mapping[str, Any], result: RunResult | None = None) -> str:
    title = f"BrainBench report · {data['receipt']['fixtures_hash'][:12]}"
    # What was graded and the verdict: static text, so the page says it even before (or without) its script.
    static = ""
    if result is not None:
        gate_class, gate_text = gate_line(result)
        static = (f'<p id="gate" class="{gate_class}">{escape(gate_text)}</p>'
                  + "".join(f'<p class="graded">{escape(line)}</p>' for line in graded_lines(result))
                  + phases_table(result))
    return "\n".join([
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{title}</title>",
        f"<style>{_asset('report.css')}</style>",
        "</head><body>",
        '<a class="skip" href="#main">Skip to content</a>',
        f'<header><h1>BrainBench report</h1><p id="receipt"></p>{static}'
        '<nav aria-label="Filters" id="filters"></nav></header>',
        '<main id="main" tabindex="-1"><noscript>This report needs JavaScript (inlined; no network).</noscript>'
        "</main>",
        f'<script type="application/json" id="report-data">{_script_json(data)}</script>',
        f"<script>{_asset('chart.umd.min.js')}</script>",
        f"<script>{_asset('report.js')}</script>",
        "</body></html>",
    ]) + "\n"


def write_report(directory: Path, result: RunResult, baseline: RunResult | Baseline | None = None) -> Path:
    """Write ``directory/index.html``; returns its path."""
    path = directory / "index.html"
    atomic_write(path, render_html(report_data(result, baseline), result))
    return path
