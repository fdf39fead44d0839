"""Every failed gold item carries a reason, from the wire plus the reference reflex on the same brain."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.report.reasons import item_reasons
from brainbench.report.trace_file import TraceFileError, load_result
from brainbench.schemas import schema_for

from .conftest import TracedRun, bench


def _reasons(run: TracedRun) -> dict[tuple[str, str], tuple[str, str]]:
    return {(r.cell, r.item): (r.verdict, r.reason) for r in item_reasons(load_result(run.out))}


def test_budget_overflow_reasons_name_rank_and_budget(traced_run: TracedRun) -> None:
    reasons = _reasons(traced_run)
    verdict, reason = reasons[("openclaw/push", "gen-push-013#1 missing funds/lodemark-partners")]
    assert verdict == "budget"
    assert "dropped by the pointer budget (rank 4 of 4, budget 3 pointers" in reason
    verdict, reason = reasons[("codex/push", "gen-kta-pos-001#1 missing people/gideon-dunmarrow")]
    assert verdict == "budget"
    assert "rank 2 of 2, budget 1 pointer;" in reason


def test_crafted_suppression_and_unresolvable_reasons(traced_run: TracedRun) -> None:
    reasons = _reasons(traced_run)
    for harness in ("openclaw", "claude-code", "codex"):
        verdict, reason = reasons[(f"{harness}/push", "craft-suppressed#3 missing people/romilly-ashenholt")]
        assert (verdict, reason) == ("suppressed", "suppressed: already injected at turn 1")
        verdict, reason = reasons[(f"{harness}/push", "craft-unresolvable#1 missing people/amadeus-quillfeather")]
        assert verdict == "unresolvable"
        assert reason.startswith("not resolvable in this brain: no alias, title, slug or surname match")
        assert reasons[(f"{harness}/know-to-ask", "craft-unresolvable#1")][0] == "unresolvable"


def test_every_failed_item_has_a_reason(traced_run: TracedRun) -> None:
    items = item_reasons(load_result(traced_run.out))
    assert len(items) >= 10
    assert all(r.verdict != "unknown" and r.reason for r in items), [r for r in items if r.verdict == "unknown"]


def test_result_stays_valid_and_references_its_trace(reference: Path, traced_run: TracedRun) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(traced_run.out.read_text())
    jsonschema.validate(doc, schema_for("result"))
    jsonschema.validate(doc, json.loads((reference / "schema" / "result.schema.json").read_text()))
    info = doc["_meta"]["trace"]
    assert info["path"] == "result.trace.jsonl" and info["rows"] == len(load_result(traced_run.out).trace)
    trace_schema = schema_for("trace")
    for line in traced_run.out.with_name(info["path"]).read_text().splitlines():
        jsonschema.validate(json.loads(line), trace_schema)
    kept = Path(info["work_root"])
    assert kept.is_dir() and list(kept.rglob("*.in.json")), "run --keep left no payloads"
    assert f"work root kept (transcripts, payloads): {kept}" in traced_run.proc.stderr


def test_a_tampered_trace_is_refused_by_name(traced_run: TracedRun, tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    out.write_text(traced_run.out.read_text())
    (tmp_path / "result.trace.jsonl").write_text(traced_run.out.with_name("result.trace.jsonl").read_text() + "\n\n")
    with pytest.raises(TraceFileError, match=r"result\.trace\.jsonl: does not match the sha256"):
        load_result(out)


def test_explain_answers_in_one_command(traced_run: TracedRun) -> None:
    proc = bench("explain", traced_run.out, "gen-kta-pos-001#1", "--harness", "codex")
    assert proc.returncode == 0, proc.stderr
    text = " ".join(proc.stdout.split())
    assert "What did Gideon Dunmarrow say about the Lumivex raise?" in text
    assert "people/gideon-dunmarrow" in text and "budget" in text
    assert "rank 2 of 2, budget 1 pointer" in text
    missing = bench("explain", traced_run.out, "no-such-fixture")
    assert missing.returncode == 2 and "no traced turn matches 'no-such-fixture'" in missing.stderr


def test_pr_delta_lists_each_newly_failed_item_once_with_its_reason(traced_run: TracedRun) -> None:
    from brainbench.gate.baseline import canonical_baseline
    from brainbench.gate.markdown import render_delta
    from brainbench.models.baseline import CellCounts

    head = load_result(traced_run.out)
    main = canonical_baseline(head, harnesses=["openclaw", "claude-code", "codex"], suites=["know-to-ask", "push"])
    # main had codex/push clean: every codex/push failure is new.
    counts = {**main.counts, "codex/push": CellCounts(gold_total=main.counts["codex/push"].gold_total, gold_failed=0)}
    main = main.model_copy(update={"counts": counts})
    text = render_delta(main, head, report_url="https://ci.example/report/index.html")
    line = ("- `codex/push`: `gen-kta-pos-001#1 missing people/gideon-dunmarrow` — budget: not injected — "
            "resolvable but dropped by the pointer budget (rank 2 of 2, budget 1 pointer; exact title match on "
            "\"gideon dunmarrow\") ([turn](https://ci.example/report/index.html#turn=codex/gen-kta-pos-001/1))")
    assert line in text.splitlines()
    assert text.count("gen-kta-pos-001#1 missing people/gideon-dunmarrow") == 1
    assert "openclaw/push" not in text.split("**Failed gold items")[1]  # unchanged cells are not itemised


def test_report_command_compares_with_a_baseline(traced_run: TracedRun, tmp_path: Path) -> None:
    from brainbench.gate.baseline import canonical_baseline
    from brainbench.models.baseline import CellCounts
    from brainbench.report.html import report_data

    head = load_result(traced_run.out)
    main = canonical_baseline(head, harnesses=["openclaw", "claude-code", "codex"], suites=["know-to-ask", "push"])
    counts = {**main.counts, "codex/push": CellCounts(gold_total=main.counts["codex/push"].gold_total, gold_failed=0)}
    base = tmp_path / "main.json"
    base.write_text(main.model_copy(update={"counts": counts}).model_dump_json())
    proc = bench("report", traced_run.out, "--compare", base, "--html", tmp_path / "html")
    assert proc.returncode == 0, proc.stderr
    page = (tmp_path / "html" / "index.html").read_text()
    assert "default-src 'none'" in page and "<script src" not in page and "<link" not in page
    from brainbench.report.html import load_side

    newly = report_data(head, load_side(base))["baseline"]["newly_failed"]
    assert newly and {n["cell"] for n in newly} == {"codex/push"}
    assert all(n["verdict"] != "unknown" for n in newly)
    bad = bench("report", tmp_path / "missing.json", "--html", tmp_path / "x")
    assert bad.returncode == 2 and "missing.json: cannot read" in bad.stderr


def test_the_result_times_each_seams_hook_calls(traced_run: TracedRun) -> None:
    """``_meta.phases`` of an embedded run: our own seams have hook-call phases only, one call per payload
    the run kept (``--keep``), and explain and the report show them."""
    doc = load_result(traced_run.out)
    phases = doc.meta.phases
    assert phases is not None and phases.jobs == 1 and phases.wall_s > 0
    assert doc.meta.trace is not None and doc.meta.trace.work_root is not None
    kept = Path(doc.meta.trace.work_root)
    assert {s.harness for s in phases.seams} == {"openclaw", "claude-code", "codex"}
    for seam in phases.seams:
        calls = seam.hook_calls
        assert calls.count == len(list((kept / seam.harness).glob("*/payloads/*.in.json"))) > 0, seam.harness
        assert not seam.image_seeded and seam.image is None
        assert (seam.template_init, seam.clone, seam.seed, seam.brain_start, seam.teardown) == (None,) * 5
        assert calls.p50_ms is not None and calls.p95_ms is not None and calls.max_ms is not None
        assert 0 < calls.p50_ms <= calls.p95_ms <= calls.max_ms
        turns = [t.latency_ms for t in doc.trace if t.harness == seam.harness]
        assert sum(turns) / 1000 <= calls.total_s + 0.01  # the user turns' calls are among them
        slow = sum(1 for t in turns if t > calls.deadline_ms)
        assert slow <= calls.over_deadline <= calls.count - len(turns) + slow
    assert set(phases.shares()) == {"hook_calls"}
    shown = bench("explain", traced_run.out, "--phases")
    assert shown.returncode == 0, shown.stderr
    assert "phases · codex · (ours)" in shown.stdout and "hook calls" in shown.stdout
    nothing = bench("explain", traced_run.out)
    assert nothing.returncode == 2 and nothing.stderr.strip().count("\n") == 0
    assert "name a FIXTURE[#TURN|#ITEM], or pass --phases" in nothing.stderr
    assert '<details id="phases">' in (traced_run.html / "index.html").read_text()
