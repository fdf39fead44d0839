"""The gate for a run on a fresh corpus (``run --fresh-corpus``): seed-independent invariants only,
unless the baseline was made from the same corpus."""

from __future__ import annotations

from brainbench.gate.compare import compare_baselines
from brainbench.models.baseline import Baseline

MAIN_HASH, FRESH_HASH = "a" * 64, "b" * 64


def _baseline(fixtures_hash: str, cells: dict[str, dict[str, float]], *, harnesses: list[str] | None = None,
              gold_failed: int = 0) -> Baseline:
    return Baseline.model_validate({
        "fixtures_hash": fixtures_hash,
        "config": {"include_holdout": False, "llm": False, "harnesses": harnesses or ["openclaw"],
                   "suites": ["push"]},
        "cells": cells,
        "counts": {key: {"gold_total": 10, "gold_failed": gold_failed} for key in cells},
    })


GOOD = {"openclaw/push": {"push_recall": 1, "push_precision": 1, "source_isolation_violations": 0}}
WORSE = {"openclaw/push": {"push_recall": 0.5, "push_precision": 1, "source_isolation_violations": 0}}
LEAKY = {"openclaw/push": {"push_recall": 1, "push_precision": 1, "source_isolation_violations": 2}}


def test_other_corpus_with_invariants_holding_is_inconclusive_and_names_the_moves() -> None:
    outcome = compare_baselines(_baseline(FRESH_HASH, WORSE, gold_failed=5), _baseline(MAIN_HASH, GOOD),
                                fresh_corpus=True)
    assert (outcome.verdict, outcome.mode, outcome.breaches) == ("inconclusive", "fresh-corpus", [])
    assert "moved adversely, not gated on a fresh corpus: openclaw/push push_recall 1 → 0.5" in outcome.notes
    assert any("--fresh-corpus SEED --compare FILE" in n for n in outcome.notes)


def test_an_isolation_leak_or_a_lost_cell_is_a_regression_on_any_corpus() -> None:
    leak = compare_baselines(_baseline(FRESH_HASH, LEAKY), _baseline(MAIN_HASH, GOOD), fresh_corpus=True,
                             allow_regression="trust me")
    assert (leak.verdict, leak.mode) == ("regression", "fresh-corpus")
    assert [(b.metric, b.current) for b in leak.breaches] == [("source_isolation_violations", 2)]
    main = _baseline(MAIN_HASH, {**GOOD, "codex/push": GOOD["openclaw/push"]}, harnesses=["codex", "openclaw"])
    lost = compare_baselines(_baseline(FRESH_HASH, GOOD, harnesses=["codex", "openclaw"]), main, fresh_corpus=True)
    assert lost.verdict == "regression" and [(b.cell, b.current) for b in lost.breaches] == [("codex/push", None)]


def test_config_mismatch_stays_inconclusive() -> None:
    outcome = compare_baselines(_baseline(FRESH_HASH, GOOD, harnesses=["codex"]), _baseline(MAIN_HASH, GOOD),
                                fresh_corpus=True)
    assert outcome.verdict == "inconclusive" and any(n.startswith("run config mismatch") for n in outcome.notes)


def test_same_corpus_gets_the_full_gate() -> None:
    outcome = compare_baselines(_baseline(FRESH_HASH, WORSE, gold_failed=5), _baseline(FRESH_HASH, GOOD),
                                fresh_corpus=True)
    assert (outcome.verdict, outcome.mode) == ("regression", "same-hash")
    assert {b.metric for b in outcome.breaches} == {"gold_failed", "push_recall"}
    assert compare_baselines(_baseline(FRESH_HASH, GOOD), _baseline(FRESH_HASH, GOOD),
                             fresh_corpus=True).verdict == "pass"


def test_without_a_fresh_corpus_another_hash_is_still_corpus_bless() -> None:
    outcome = compare_baselines(_baseline(FRESH_HASH, GOOD), _baseline(MAIN_HASH, GOOD))
    assert (outcome.verdict, outcome.mode) == ("inconclusive", "corpus-bless")
