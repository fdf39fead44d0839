"""Every branch of compare_baselines, in spec §10.2 order (mirrors gbrain's scoreboard tests)."""

from __future__ import annotations

import pytest
from brainbench.gate.baseline import canonical_baseline
from brainbench.gate.compare import (
    compare_baselines,
    exit_code_for,
    failed_items,
    newly_failed_items,
)

from ._builders import HASH_A, HASH_B, baseline, make_cell, make_result, row


def _notes(outcome) -> str:
    return "\n".join(outcome.notes)


def test_exit_codes() -> None:
    assert [exit_code_for(v) for v in ("pass", "regression", "inconclusive")] == [0, 1, 2]


def test_identical_passes_same_hash() -> None:
    out = compare_baselines(baseline(), baseline())
    assert (out.verdict, out.mode, out.breaches, out.notes) == ("pass", "same-hash", [], [])


# --- 1. isolation -------------------------------------------------------------------

def test_isolation_breach_even_if_main_had_it() -> None:
    cells = baseline().cells
    cells["openclaw/push"]["source_isolation_violations"] = 2
    main = baseline(cells={k: dict(v) for k, v in cells.items()})
    current = baseline(cells=cells)
    out = compare_baselines(current, main)
    assert out.verdict == "regression"
    [b] = out.breaches
    assert (b.cell, b.metric, b.main, b.current) == ("openclaw/push", "source_isolation_violations", 0, 2)
    assert "data-leak invariant" in b.detail


def test_isolation_breach_cannot_be_allowed_or_blessed() -> None:
    cells = baseline().cells
    cells["openclaw/push"]["source_isolation_violations"] = 1
    current = baseline(cells=cells)
    out = compare_baselines(current, baseline(), allow_regression="ship it")
    assert out.verdict == "regression"
    assert "cannot be blessed" in _notes(out)
    committed = current.model_copy(update={"justification": "we meant it"})
    out = compare_baselines(current, baseline(), committed=committed)
    assert out.verdict == "regression"


# --- 3. config binding ----------------------------------------------------------------

@pytest.mark.parametrize(
    "kwargs",
    [
        {"include_holdout": True},
        {"harnesses": ["codex", "openclaw"]},
        {"harnesses": ["openclaw", "openclaw"]},  # not de-duplicated: a mismatch
        {"suites": ["push"]},
    ],
)
def test_config_mismatch_is_inconclusive(kwargs) -> None:
    out = compare_baselines(baseline(**kwargs), baseline())
    assert out.verdict == "inconclusive"
    assert exit_code_for(out.verdict) == 2
    assert "run config mismatch" in _notes(out)


def test_config_mismatch_checked_before_counts() -> None:
    current = baseline(include_holdout=True, counts={"openclaw/know-to-ask": (149, 5), "openclaw/push": (96, 9)})
    out = compare_baselines(current, baseline())
    assert out.verdict == "inconclusive"
    assert out.breaches == []


# --- 4. counts (same-hash) ------------------------------------------------------------

def test_one_newly_failed_gold_item_is_a_regression() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 10)})
    out = compare_baselines(current, baseline())
    assert out.verdict == "regression"
    [b] = out.breaches
    assert (b.cell, b.metric, b.main, b.current) == ("openclaw/push", "gold_failed", 9, 10)
    assert "1 newly-failed gold item(s)" == b.detail


def test_fewer_failures_pass() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 0)})
    assert compare_baselines(current, baseline()).verdict == "pass"


def test_gold_total_drift_under_same_hash() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (150, 0), "openclaw/push": (96, 9)})
    out = compare_baselines(current, baseline())
    assert out.verdict == "regression"
    [b] = out.breaches
    assert b.metric == "gold_total"
    assert "WITHOUT a fixture change" in b.detail


def test_missing_cell_is_a_regression() -> None:
    current = baseline(
        cells={"openclaw/know-to-ask": baseline().cells["openclaw/know-to-ask"]},
        counts={"openclaw/know-to-ask": (149, 0)},
    )
    out = compare_baselines(current, baseline())
    assert out.verdict == "regression"
    [b] = out.breaches
    assert (b.cell, b.metric, b.main, b.current) == ("openclaw/push", "gold_failed", 9, None)
    assert "coverage disappeared" in b.detail
    assert out.model_dump(mode="json")["breaches"][0]["current"] is None  # JS NaN → null


def test_cells_only_in_current_are_ignored() -> None:
    cells = baseline().cells
    cells["openclaw/write-back"] = {"write_back_fidelity": 0}
    counts = {"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 9), "openclaw/write-back": (5, 5)}
    assert compare_baselines(baseline(cells=cells, counts=counts), baseline()).verdict == "pass"


# --- 5. gated metrics -----------------------------------------------------------------

def test_precision_drop_alone_is_a_regression() -> None:
    cells = baseline().cells
    cells["openclaw/push"]["push_precision"] = 0.95
    out = compare_baselines(baseline(cells=cells), baseline())
    assert out.verdict == "regression"
    [b] = out.breaches
    assert (b.metric, b.main, b.current, b.detail) == ("push_precision", 1, 0.95, "fell 0.05")


def test_rate_rise_is_a_regression() -> None:
    cells = baseline().cells
    cells["openclaw/know-to-ask"]["false_fire_rate"] = 0.0134
    out = compare_baselines(baseline(cells=cells), baseline())
    assert [b.detail for b in out.breaches] == ["rose 0.0134"]


def test_improvement_and_token_change_pass() -> None:
    cells = baseline().cells
    cells["openclaw/push"]["push_recall"] = 1
    cells["openclaw/push"]["avg_injected_tokens"] = 99.5  # never gated
    cells["openclaw/know-to-ask"]["avg_injected_tokens"] = 1
    out = compare_baselines(baseline(cells=cells), baseline())
    assert (out.verdict, out.breaches) == ("pass", [])


def test_metric_missing_from_current_is_not_gated() -> None:
    cells = baseline().cells
    del cells["openclaw/push"]["push_precision"]
    assert compare_baselines(baseline(cells=cells), baseline()).verdict == "pass"


# --- 6. corpus-bless ------------------------------------------------------------------

def _regressed_foreign(**kw):
    cells = baseline().cells
    cells["openclaw/push"]["push_recall"] = 0.8
    return baseline(fixtures_hash=HASH_B, cells=cells, **kw)


def test_bless_without_committed_is_inconclusive() -> None:
    out = compare_baselines(baseline(fixtures_hash=HASH_B), baseline())
    assert (out.verdict, out.mode) == ("inconclusive", "corpus-bless")
    assert "--update-baseline" in _notes(out)
    assert f"fixtures_hash changed ({HASH_A[:12]} → {HASH_B[:12]}) — corpus-bless mode" in out.notes


def test_bless_committed_not_matching_run_is_inconclusive() -> None:
    current = baseline(fixtures_hash=HASH_B)
    committed = baseline(fixtures_hash=HASH_B, counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 8)})
    out = compare_baselines(current, baseline(), committed=committed)
    assert out.verdict == "inconclusive"
    assert "does not match this run" in _notes(out)


def test_bless_foreign_hash_doctored_committed_is_inconclusive() -> None:
    # A committed baseline with yet another hash cannot bless this run.
    current = baseline(fixtures_hash=HASH_B)
    committed = baseline(fixtures_hash="c" * 64)
    assert compare_baselines(current, baseline(), committed=committed).verdict == "inconclusive"


def test_bless_matching_committed_passes() -> None:
    current = baseline(fixtures_hash=HASH_B)
    out = compare_baselines(current, baseline(), committed=current)
    assert (out.verdict, out.breaches) == ("pass", [])


def test_bless_regression_requires_justification() -> None:
    current = _regressed_foreign()
    out = compare_baselines(current, baseline(), committed=current)
    assert out.verdict == "regression"
    assert "justification" in _notes(out)
    blessed = current.model_copy(update={"justification": "harder push corpus"})
    out = compare_baselines(current, baseline(), committed=blessed)
    assert out.verdict == "pass"
    assert "regression blessed: harder push corpus" in out.notes
    assert [b.metric for b in out.breaches] == ["push_recall"]  # still listed


def test_bless_regression_with_allow_regression_passes() -> None:
    current = _regressed_foreign()
    out = compare_baselines(current, baseline(), committed=current, allow_regression="local try")
    assert out.verdict == "pass"
    assert "regression blessed: local try" in out.notes


def test_bless_count_increases_not_compared_across_hashes() -> None:
    counts = {"openclaw/know-to-ask": (160, 3), "openclaw/push": (120, 30)}
    current = baseline(fixtures_hash=HASH_B, counts=counts)
    out = compare_baselines(current, baseline(), committed=current)
    assert (out.verdict, out.breaches) == ("pass", [])


def test_bless_gold_total_shrink_is_hollowing() -> None:
    counts = {"openclaw/know-to-ask": (100, 0), "openclaw/push": (96, 9)}
    current = baseline(fixtures_hash=HASH_B, counts=counts)
    out = compare_baselines(current, baseline(), committed=current)
    assert out.verdict == "regression"
    [b] = out.breaches
    assert b.metric == "gold_total" and "hollowing" in b.detail
    justified = current.model_copy(update={"justification": "dropped duplicated fixtures"})
    assert compare_baselines(current, baseline(), committed=justified).verdict == "pass"


# --- 7. same-hash hardening -----------------------------------------------------------

def test_same_hash_doctored_committed_is_inconclusive() -> None:
    # Committed claims better numbers than both main and the actual run.
    doctored = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 0)})
    out = compare_baselines(baseline(), baseline(), committed=doctored)
    assert out.verdict == "inconclusive"
    assert "receipts-backed" in _notes(out)


def test_same_hash_committed_equal_to_run_improvement_passes() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 5)})
    out = compare_baselines(current, baseline(), committed=current)
    assert out.verdict == "pass"
    assert "visible delta" in _notes(out)


def test_same_hash_committed_equal_to_run_regression_needs_justification() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 12)})
    out = compare_baselines(current, baseline(), committed=current)
    assert out.verdict == "regression"
    assert "justification" in _notes(out)
    justified = current.model_copy(update={"justification": "budget cut to 2 pointers on purpose"})
    out = compare_baselines(current, baseline(), committed=justified)
    assert out.verdict == "pass"
    assert "regression blessed: budget cut to 2 pointers on purpose" in out.notes


def test_same_hash_committed_equal_to_main_is_plain_gate() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 10)})
    justified_main = baseline(justification="old reason")  # justification alone is not a data change
    out = compare_baselines(current, baseline(), committed=justified_main)
    assert out.verdict == "regression"
    assert out.notes == []


# --- 8. allow-regression ----------------------------------------------------------------

def test_allow_regression_passes_and_keeps_breaches() -> None:
    current = baseline(counts={"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 10)})
    out = compare_baselines(current, baseline(), allow_regression="e2e test bless")
    assert out.verdict == "pass"
    assert "regression allowed: e2e test bless" in out.notes
    assert len(out.breaches) == 1


# --- naming failed items from turn rows ----------------------------------------------

def _rows(push_injected: list[str]) -> list:
    return [
        row("kta-001", 1, "know-to-ask", [], {"should_retrieve": True, "gold_slugs": ["people/a"]}),
        row("kta-001", 2, "know-to-ask", ["people/b"], {"should_retrieve": False}),
        row("kta-001", 3, "know-to-ask", ["companies/c"],
            {"should_retrieve": True, "gold_slugs": ["people/a"], "acceptable_slugs": ["companies/c"]}),
        row("push-001", 1, "push", push_injected,
            {"should_retrieve": True, "gold_slugs": ["people/a", "people/b", "people/c"]}),
        row("push-001", 2, "push", [], None),
    ]


def test_failed_items_named_like_gbrain() -> None:
    result = make_result(turn_rows=_rows(["people/a"]))
    assert failed_items(result) == {
        "openclaw/know-to-ask": ["kta-001#1", "kta-001#2 (false fire)"],
        "openclaw/push": ["push-001#1 missing people/b", "push-001#1 missing people/c"],
    }


def test_newly_failed_items_diff() -> None:
    main = make_result(turn_rows=_rows(["people/a", "people/b"]))
    head = make_result(turn_rows=_rows(["people/a"]))
    assert newly_failed_items(head, main) == {"openclaw/push": ["push-001#1 missing people/b"]}
    assert newly_failed_items(main, main) == {}


def test_canonical_of_run_feeds_compare() -> None:
    result = make_result()
    current = canonical_baseline(result, harnesses=["openclaw"], suites=["push", "know-to-ask"])
    assert compare_baselines(current, baseline()).verdict == "pass"
    worse = make_result([
        make_cell("openclaw", "know-to-ask", {"know_to_ask_failure_rate": 1 / 62, "false_fire_rate": 0,
                                              "source_isolation_violations": 0, "avg_injected_tokens": 38}, 149, 1),
        make_cell("openclaw", "push", {"push_precision": 1, "push_recall": 87 / 96,
                                       "source_isolation_violations": 0, "avg_injected_tokens": 50}, 96, 9),
    ])
    current = canonical_baseline(worse, harnesses=["openclaw"], suites=["push", "know-to-ask"])
    out = compare_baselines(current, baseline())
    assert out.verdict == "regression"
    assert sorted(b.detail for b in out.breaches) == ["1 newly-failed gold item(s)", "rose 0.0161"]
