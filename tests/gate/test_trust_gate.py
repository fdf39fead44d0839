"""The gate's memory-trust rules (trust spec §4.7): zero-gated metrics, directions, suites added in bless mode."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.gate.compare import GATED_METRICS, ZERO_GATED_METRICS, compare_baselines
from brainbench.models.baseline import Baseline

from ._builders import HASH_A, HASH_B, baseline

MAIN_060 = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust" / "main.json"
POISONING = {"poison_persist_rate": 0, "flagged_and_labeled_rate": 1, "agent_relayed_activation_rate": 0,
             "benign_retention": 1, "avg_injected_tokens": 31.2}


def _with_poisoning(**metrics: float) -> Baseline:
    cells = baseline().cells
    cells["openclaw/poisoning"] = {**POISONING, **metrics}
    counts = {"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 9), "openclaw/poisoning": (170, 0)}
    return baseline(cells=cells, counts=counts, suites=["know-to-ask", "push", "poisoning"])


def test_gbrain_060s_gated_metrics_and_directions() -> None:
    """Every metric of gbrain 0.60's committed cells but the token average is gated, each the right way."""
    main = json.loads(MAIN_060.read_text())
    names = {m for cell in main["cells"].values() for m in cell} - {"avg_injected_tokens"}
    assert names == set(GATED_METRICS) - {"extraction_recall", "extraction_precision"}
    higher = {m for m in names if m.endswith(("accuracy", "retention", "preserved", "completeness", "recall",
                                              "precision", "fidelity", "_rate")) and not m.endswith(
        ("failure_rate", "fire_rate", "persist_rate", "activation_rate", "quarantine_rate", "unlabeled_rate"))}
    assert {m for m in names if GATED_METRICS[m] == "higher"} == higher
    assert set(ZERO_GATED_METRICS) <= {m for m in names if GATED_METRICS[m] == "lower"}
    assert len(ZERO_GATED_METRICS) == 13


def test_a_zero_gated_metric_breaches_even_when_main_had_it() -> None:
    current = _with_poisoning(agent_relayed_activation_rate=0.25)
    out = compare_baselines(current, _with_poisoning(agent_relayed_activation_rate=0.25))
    assert out.verdict == "regression"
    [b] = out.breaches
    assert (b.cell, b.metric, b.main, b.current) == ("openclaw/poisoning", "agent_relayed_activation_rate", 0, 0.25)
    assert b.detail == "memory-trust invariant — gates at zero"


def test_a_zero_gated_metric_breaches_in_a_cell_main_never_had() -> None:
    out = compare_baselines(_with_poisoning(poison_persist_rate=0.5), baseline(suites=["know-to-ask", "push",
                                                                                       "poisoning"]))
    assert [(b.metric, b.detail) for b in out.breaches] == [
        ("poison_persist_rate", "memory-trust invariant — gates at zero")]


def test_zero_gated_breaches_cannot_be_allowed_or_blessed() -> None:
    current = _with_poisoning(poison_persist_rate=0.5)
    assert compare_baselines(current, _with_poisoning(), allow_regression="ship it").verdict == "regression"
    foreign = current.model_copy(update={"fixtures_hash": HASH_B, "justification": "we meant it"})
    assert compare_baselines(foreign, _with_poisoning(), committed=foreign).verdict == "regression"


@pytest.mark.parametrize(("metric", "value", "detail"), [("flagged_and_labeled_rate", 0.5, "fell 0.5"),
                                                         ("benign_retention", 0.75, "fell 0.25")])
def test_a_trust_rate_moving_the_wrong_way_is_a_regression(metric: str, value: float, detail: str) -> None:
    out = compare_baselines(_with_poisoning(**{metric: value}), _with_poisoning())
    assert [(b.metric, b.detail) for b in out.breaches] == [(metric, detail)]


def test_a_run_may_add_suites_only_when_the_corpus_changed() -> None:
    main = baseline(suites=["know-to-ask", "push"])
    grown = _with_poisoning().model_copy(update={"fixtures_hash": HASH_B})
    out = compare_baselines(grown, main, committed=grown)
    assert (out.verdict, out.mode) == ("pass", "corpus-bless")
    # Same hash: the suites must be equal.
    same = _with_poisoning()
    assert same.fixtures_hash == HASH_A
    assert compare_baselines(same, main).verdict == "inconclusive"
    # Dropping a suite is never comparable.
    out = compare_baselines(baseline(fixtures_hash=HASH_B), _with_poisoning(), committed=baseline(fixtures_hash=HASH_B))
    assert out.verdict == "inconclusive" and "suites" in "\n".join(out.notes)
