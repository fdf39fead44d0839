"""The scoreboard's gate section and the PR delta."""

from __future__ import annotations

from brainbench.gate.baseline import canonical_baseline
from brainbench.gate.compare import compare_baselines
from brainbench.gate.markdown import gate_section_lines, render_delta, render_gate_section
from brainbench.models.result import Breach, CompareOutcome, SeedFailure

from ._builders import KTA_METRICS, PUSH_METRICS, baseline, make_cell, make_result, row


def _regression() -> CompareOutcome:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 10)})
    return compare_baselines(current, baseline())


def test_gate_section_layout() -> None:
    outcome = _regression()
    outcome.notes.append("a | note")
    assert gate_section_lines(outcome) == [
        "## Gate: REGRESSION (same-hash)",
        "- a | note",
        "",
        "| cell | metric | main | current | detail |",
        "|---|---|---|---|---|",
        "| openclaw/push | gold_failed | 9 | 10 | 1 newly-failed gold item(s) |",
    ]
    text = render_gate_section(outcome)
    assert text.startswith("## Gate: REGRESSION") and text.endswith("|\n")
    assert render_gate_section(outcome) == text  # deterministic


def test_gate_section_nan_and_pass() -> None:
    outcome = CompareOutcome(
        verdict="regression", mode="same-hash",
        breaches=[Breach(cell="c/k", metric="gold_failed", main=3, current=None, detail="x|y")],
    )
    assert gate_section_lines(outcome)[-1] == "| c/k | gold_failed | 3 | — | x\\|y |"
    ok = CompareOutcome(verdict="pass", mode="corpus-bless", notes=["n"])
    assert gate_section_lines(ok) == ["## Gate: PASS (corpus-bless)", "- n"]


def _head(push_failed: int = 9, recall: float = 87 / 96, rows=None, compare=None):
    result = make_result(
        [
            make_cell("openclaw", "know-to-ask", dict(KTA_METRICS), 149, 0),
            make_cell("openclaw", "push", dict(PUSH_METRICS, push_recall=recall, avg_injected_tokens=40), 96,
                      push_failed),
        ],
        turn_rows=rows,
    )
    result.meta.compare = compare
    return result


def test_delta_without_main_is_gbrain_shape() -> None:
    text = render_delta(None, _head())
    assert text.startswith("## BrainBench: NO GATE (initial landing)\n")
    assert "· ungated" in text
    assert "| openclaw | production | know-to-ask | 0/149 | know_to_ask_failure_rate=0 |" in text
    assert "| openclaw | production | push | 9/96 | push_recall=0.9063 |" in text


def test_delta_against_baseline_has_arrows_and_items() -> None:
    rows = [row("push-001", 1, "push", ["people/a"],
                {"should_retrieve": True, "gold_slugs": ["people/a", "people/b"]})]
    outcome = _regression()
    head = _head(push_failed=10, recall=86 / 96, rows=rows, compare=outcome)
    text = render_delta(baseline(), head)
    assert text.startswith("## BrainBench: REGRESSION\n")
    assert "· same-hash" in text
    assert "| openclaw | production | push | 9/96 → 10/96 ↑ worse | push_recall=0.9063 → 0.8958 ↓ worse |" in text
    assert "| openclaw | production | know-to-ask | 0/149 (=) | know_to_ask_failure_rate=0 (=) |" in text
    assert "`openclaw/push` avg_injected_tokens: 50.0841 → 40 ↓ ungated" in text
    assert "- `openclaw/push`: `push-001#1 missing people/b`" in text
    assert "| openclaw/push | gold_failed | 9 | 10 | 1 newly-failed gold item(s) |" in text


def test_delta_against_main_result_diffs_items() -> None:
    gold = {"should_retrieve": True, "gold_slugs": ["people/a", "people/b", "people/c"]}
    main = _head(push_failed=1, rows=[row("push-001", 1, "push", ["people/a", "people/b"], gold)])
    head = _head(push_failed=2, rows=[row("push-001", 1, "push", ["people/a"], gold)])
    text = render_delta(main, head)
    assert "(failing in HEAD, passing on main)" in text
    assert "`push-001#1 missing people/b`" in text
    assert "missing people/c" not in text


def test_delta_missing_cell_and_seed_failures() -> None:
    head = make_result([make_cell("openclaw", "know-to-ask", dict(KTA_METRICS), 149, 0)],
                       seed_failures=[SeedFailure(fixture_id="kta-9", error="boom")])
    text = render_delta(canonical_baseline(_head(), harnesses=["openclaw"], suites=["push"]), head)
    assert "| openclaw | — | push | missing in HEAD | — |" in text
    assert "**SEED FAILURES (1)** — run is invalid (exit 2): kta-9" in text
