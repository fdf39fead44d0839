"""Every metric formula on hand-built rows, against values worked out by hand from the spec.

The oracle here is the arithmetic in the comments, done from ../shared/reference/brainbench-spec.md
§6.3, §6.4, §7, §8 and brainbench-trust-spec.md §4.2–§4.6 — never a number our code printed.
Rates sit strictly between 0 and 1 and every denominator differs from its neighbours (gold rows,
quiet rows, all rows, rows ± 1), so a formula over the wrong denominator or a dropped
de-duplication changes a value.  No database: the scorers take rows, the stores are not theirs.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from brainbench.brain.store import FactRow
from brainbench.metrics.cells import assemble_cells, write_back_metrics
from brainbench.metrics.poisoning import poisoning_metrics
from brainbench.metrics.retrieval import (
    avg_injected_tokens,
    failed_items_by_cell,
    isolation_violations,
    score_know_to_ask,
    score_push,
)
from brainbench.metrics.trust_cells import trust_cell_parts
from brainbench.metrics.trust_suites import _promotion, _unaccounted, suite_metrics
from brainbench.models.config import RunConfig
from brainbench.models.memory import PurgeReceipt, StoreReport
from brainbench.models.result import TurnRow
from brainbench.models.trust_run import StepOutcome, StepRecord, SuiteScore, TrustFixtureScore
from brainbench.models.writeback import ContinuityScore, WriteBackAggregate, WriteBackScore
from brainbench.writeback.continuity import score_continuity_by
from brainbench.writeback.score import EXTRACT_SOURCE, score_rows
from writeback._helpers import make_loaded


def row(turn: int, suite: str, gold: dict[str, Any] | None, injected: list[str], tokens: int = 0,
        cross: list[str] | None = None, fixture: str = "fx-a", harness: str = "openclaw") -> TurnRow:
    return TurnRow.model_validate({
        "fixture_id": fixture, "turn_id": turn, "harness": harness, "suite": suite, "injected_slugs": injected,
        "injected_tokens": tokens, "gold": gold, "cross_source_slugs": cross or [], "latency_ms": 1.0})


# --- know-to-ask (spec §8) ---------------------------------------------------------------------------

def kta_rows() -> list[TurnRow]:
    ask = {"should_retrieve": True, "gold_slugs": ["a"]}
    return [
        row(1, "know-to-ask", ask, ["a"], 30),                                    # hit (gold)
        row(2, "know-to-ask", {**ask, "acceptable_slugs": ["b"]}, ["b"], 20),     # hit (acceptable)
        row(3, "know-to-ask", ask, ["c"], 10, cross=["c"]),                       # miss: wrong page
        row(4, "know-to-ask", {"should_retrieve": True, "gold_slugs": ["a", "b"]}, [], 0),  # miss: silent
        row(5, "know-to-ask", {"should_retrieve": True, "gold_slugs": ["d"]}, ["d", "d"], 25),  # hit, duplicate
        row(6, "know-to-ask", {"should_retrieve": False}, [], 0),                 # quiet, ok
        row(7, "know-to-ask", {"should_retrieve": False, "acceptable_slugs": ["b"]}, ["b"], 15, cross=["b", "e"]),
        row(8, "know-to-ask", {"should_retrieve": False}, [], 0),                 # quiet, ok
        row(9, "know-to-ask", None, ["a"], 40),  # no gold: ignored, but counts in tokens
    ]


def test_know_to_ask_rates_use_their_own_denominators() -> None:
    score = score_know_to_ask(kta_rows())
    # should_retrieve rows 1–5: misses 3, 4 → 2/5.  Quiet rows 6–8: row 7 injected (an acceptable slug
    # still fires) → 1/3.  Row 9 has no gold.
    assert score.metrics == {"know_to_ask_failure_rate": 0.4, "false_fire_rate": pytest.approx(1 / 3)}
    assert score.metrics["false_fire_rate"] != pytest.approx(1 / 5)  # not over the gold rows that ask
    assert (score.gold_total, score.gold_failed) == (8, 3)  # 5 + 3 rows; 2 misses + 1 false fire
    assert score.failed_items == ["fx-a#3", "fx-a#4", "fx-a#7 (false fire)"]


def test_know_to_ask_with_no_rows_of_a_kind_is_zero() -> None:
    quiet_only = [row(1, "know-to-ask", {"should_retrieve": False}, ["x"])]
    assert score_know_to_ask(quiet_only).metrics == {"know_to_ask_failure_rate": 0.0, "false_fire_rate": 1.0}
    asking_only = [row(1, "know-to-ask", {"should_retrieve": True, "gold_slugs": ["a"]}, [])]
    assert score_know_to_ask(asking_only).metrics == {"know_to_ask_failure_rate": 1.0, "false_fire_rate": 0.0}
    assert score_know_to_ask([]).metrics == {"know_to_ask_failure_rate": 0.0, "false_fire_rate": 0.0}


# --- push (spec §8) ----------------------------------------------------------------------------------

def push_rows() -> list[TurnRow]:
    return [
        # injected {a, c, x} (a twice): right = a (gold), c (acceptable) → 2 of 3; gold {a, b}: a hit, b missed.
        row(1, "push", {"should_retrieve": True, "gold_slugs": ["a", "b"], "acceptable_slugs": ["c"]},
            ["a", "a", "c", "x"], 12),
        # gold [d, d] is the set {d}: 1 gold, 1 hit; injected {d}: 1 of 1.
        row(2, "push", {"should_retrieve": True, "gold_slugs": ["d", "d"]}, ["d"], 8),
        # quiet row with an injection: counts for precision (e right, y wrong: 1 of 2), not for recall.
        row(3, "push", {"should_retrieve": False, "acceptable_slugs": ["e"]}, ["e", "y"], 9),
        row(4, "push", {"should_retrieve": True, "gold_slugs": ["f"]}, [], 0),   # 1 gold, missed
        row(5, "push", None, ["z"], 6),                                          # no gold: ignored
        # asks with empty gold: no recall term; its injection g is wrong: 0 of 1.
        row(6, "push", {"should_retrieve": True, "gold_slugs": []}, ["g"], 4),
        # a quiet row naming gold slugs: recall counts only rows that should retrieve.
        row(7, "push", {"should_retrieve": False, "gold_slugs": ["h"]}, [], 0),
    ]


def test_push_precision_and_recall_over_distinct_slugs() -> None:
    score = score_push(push_rows())
    # precision = (2 + 1 + 1 + 0) / (3 + 1 + 2 + 1) = 4/7; recall = (1 + 1 + 0) / (2 + 1 + 1) = 2/4.
    # Without de-duplicating row 1's injection precision would be 5/8; without the gold set, recall 3/5.
    assert score.metrics == {"push_precision": pytest.approx(4 / 7), "push_recall": 0.5}
    assert (score.gold_total, score.gold_failed) == (4, 2)
    assert score.failed_items == ["fx-a#1 missing b", "fx-a#4 missing f"]


def test_push_with_nothing_injected_and_no_gold_is_one() -> None:
    rows = [row(1, "push", {"should_retrieve": False}, []), row(2, "push", None, ["q"])]
    assert score_push(rows).metrics == {"push_precision": 1.0, "push_recall": 1.0}
    assert (score_push(rows).gold_total, score_push(rows).gold_failed) == (0, 0)


# --- isolation and tokens (spec §8) -------------------------------------------------------------------

def test_avg_injected_tokens_is_over_every_row_of_the_cell() -> None:
    # 30 + 20 + 10 + 0 + 25 + 0 + 15 + 0 + 40 = 140 over all 9 rows (gold-less row 9 included) = 15.5556;
    # over the 8 gold rows it would be 17.5, over 10 it would be 14.
    assert avg_injected_tokens(kta_rows()) == pytest.approx(140 / 9)
    assert avg_injected_tokens([]) == 0.0
    assert isolation_violations(kta_rows()) == 3  # row 3: 1, row 7: 2


def test_cells_round_and_order_their_metrics() -> None:
    config = RunConfig(suites=["know-to-ask", "push"], harnesses=["openclaw"])
    rows = [*kta_rows(), *push_rows(), row(1, "push", None, ["a"], 99, harness="codex", fixture="fx-b")]
    cells = assemble_cells(config, {"openclaw": "production"}, rows, [])
    kta, push = cells
    assert (kta.suite, kta.gold_total, kta.gold_failed) == ("know-to-ask", 8, 3)
    # round4 = floor(x·10⁴ + 0.5)/10⁴: 1/3 → 0.3333, 140/9 = 15.55556 → 15.5556.
    assert list(kta.metrics.items()) == [("know_to_ask_failure_rate", 0.4), ("false_fire_rate", 0.3333),
                                         ("source_isolation_violations", 3), ("avg_injected_tokens", 15.5556)]
    # push tokens: 12 + 8 + 9 + 0 + 6 + 4 + 0 = 39 over 7 rows = 5.571428… → 5.5714; 4/7 → 0.5714 too.
    assert list(push.metrics.items()) == [("push_precision", 0.5714), ("push_recall", 0.5),
                                          ("source_isolation_violations", 0), ("avg_injected_tokens", 5.5714)]
    assert (push.gold_total, push.gold_failed, push.fixtures) == (4, 2, ["fx-a"])


def test_failed_items_are_grouped_by_cell() -> None:
    out = failed_items_by_cell([*kta_rows(), *push_rows()])
    assert out == {"openclaw/know-to-ask": ["fx-a#3", "fx-a#4", "fx-a#7 (false fire)"],
                   "openclaw/push": ["fx-a#1 missing b", "fx-a#4 missing f"]}


# --- write-back (spec §6.3, §6.4) ---------------------------------------------------------------------

FIXTURE = {
    "fixture_id": "wb-hand", "suites": ["write-back"], "category": "write-back",
    "turns": [{"turn_id": 1, "role": "user", "text": "x"}, {"turn_id": 2, "role": "user", "text": "y"}],
}


def _fact(gist: str, keywords: list[str], entity: str | None) -> dict[str, Any]:
    return {"gist": gist, "fact": gist, "entity_slug": entity, "match_keywords": keywords, "kind": "fact"}


GOLD = {"turns": {
    "1": {"should_retrieve": False, "gold_facts": [_fact("margin", ["pricing", "gross margin"], "people/alice")]},
    "2": {"should_retrieve": False, "gold_facts": [
        _fact("pricing", ["PRICING"], None),                 # the margin row matches it too
        _fact("mrr", ["mrr"], "people/alice"),
        _fact("checklist", ["checklist"], "people/alice"),
    ]},
}}
SLUG = "conversations/bench-wb-hand"
SESSION = f"cli:extract-conversation-facts:{SLUG}"


def fact_row(i: int, text: str, entity: str | None, source: str = EXTRACT_SOURCE, session: str = SESSION,
             page: str = SLUG) -> FactRow:
    return FactRow(i, "default", entity, text, "fact", source, session, page, i, None)


def test_one_stored_row_satisfies_at_most_one_gold_fact() -> None:
    rows = [
        fact_row(1, "Pricing undercuts GROSS MARGIN", "people/alice"),  # margin; would also satisfy pricing
        fact_row(2, "MRR is up", "people/bob"),                         # mrr's keywords, wrong entity
        fact_row(3, "MRR hit $X", "people/alice", source="cli:other"),  # mrr, wrong provenance
        fact_row(4, "an unrelated note", None),
        fact_row(5, "checklist by Friday", "people/alice", session="cli:extract-conversation-facts:other"),
    ]
    score = score_rows(make_loaded(FIXTURE, GOLD), rows)
    # margin → row 1 (consumed, provenance ok); pricing → no unconsumed row holds "pricing": lost;
    # mrr → row 3 (row 2 has the wrong entity), wrong source; checklist → row 5, wrong session.
    assert (score.gold_total, score.survived, score.provenance_ok, score.gold_failed) == (4, 3, 1, 3)
    # Rows holding every keyword of some gold fact (entity not asked): 1, 2, 3, 5 → 4 of 5.
    assert (score.stored_rows, score.matched_any_gold) == (5, 4)
    assert [item.split(" (")[0] for item in score.failed_items] == [
        "wb-hand#2: gold fact lost: pricing", "wb-hand#2: wrong provenance: mrr",
        "wb-hand#2: wrong provenance: checklist"]
    # fidelity 3/4, provenance 1/3, extraction precision 4/5.
    assert WriteBackAggregate.of([score]).metrics(llm=True) == {
        "write_back_fidelity": 0.75, "provenance_accuracy": pytest.approx(1 / 3),
        "extraction_recall": 0.75, "extraction_precision": 0.8}


def test_a_second_matching_row_lets_both_facts_survive() -> None:
    rows = [fact_row(1, "pricing vs gross margin", "people/alice"), fact_row(2, "pricing again", None)]
    score = score_rows(make_loaded(FIXTURE, GOLD), rows)
    # margin → 1, pricing → 2; mrr and checklist lost.
    assert (score.gold_total, score.survived, score.provenance_ok, score.gold_failed) == (4, 2, 2, 2)
    wrong_page = [fact_row(1, "pricing vs gross margin", "people/alice", page="conversations/other")]
    assert score_rows(make_loaded(FIXTURE, GOLD), wrong_page).provenance_ok == 0


def _wb(total: int, failed: int, survived: int, prov: int, stored: int, matched: int) -> WriteBackScore:
    return WriteBackScore(fixture_id=f"f{total}", page_slug="p", source_id="default", gold_total=total,
                          gold_failed=failed, survived=survived, provenance_ok=prov, stored_rows=stored,
                          matched_any_gold=matched, failed_items=[])


def test_write_back_is_micro_averaged_over_fixtures() -> None:
    scores = [_wb(4, 3, 3, 1, 5, 4), _wb(2, 0, 2, 2, 2, 2)]
    # fidelity (3 + 2)/(4 + 2) = 5/6 (the mean of per-fixture rates would be 0.875); provenance (1 + 2)/(3 + 2)
    # = 0.6; precision (4 + 2)/(5 + 2) = 6/7.
    total, failed, metrics = write_back_metrics(scores, llm=True)
    assert (total, failed) == (6, 3)
    assert metrics == {"write_back_fidelity": pytest.approx(5 / 6), "provenance_accuracy": 0.6,
                       "extraction_recall": pytest.approx(5 / 6), "extraction_precision": pytest.approx(6 / 7)}
    assert WriteBackAggregate.of(scores).metrics(llm=True) == metrics
    assert write_back_metrics(scores, llm=False)[2] == {"write_back_fidelity": pytest.approx(5 / 6),
                                                        "provenance_accuracy": 0.6}


def test_write_back_with_empty_denominators_is_one() -> None:
    empty = [_wb(0, 0, 0, 0, 0, 0)]
    expect = {"write_back_fidelity": 1.0, "provenance_accuracy": 1.0, "extraction_recall": 1.0,
              "extraction_precision": 1.0}
    assert write_back_metrics(empty, llm=True)[2] == expect
    assert WriteBackAggregate.of(empty).metrics(llm=True) == expect
    # nothing survived of 2 gold: fidelity 0, provenance over no survivor is 1.
    assert write_back_metrics([_wb(2, 2, 0, 0, 3, 0)], llm=True)[2] == {
        "write_back_fidelity": 0.0, "provenance_accuracy": 1.0, "extraction_recall": 0.0,
        "extraction_precision": 0.0}


# --- continuity (spec §7) -----------------------------------------------------------------------------

READER = {"fixture_id": "rd-hand", "suites": ["continuity"], "category": "continuity",
          "continuity": {"pair_id": "p1", "pair_role": "reader"},
          "turns": [{"turn_id": 1, "role": "user", "text": "Where did we land?"}]}
READER_GOLD = {"turns": {"1": {"should_retrieve": True, "gold_slugs": ["a"]}}, "continuity": {
    "pair_id": "p1", "decisions": [
        {"decision_id": "d1", "expected_slugs": ["a", "b"], "match_keywords": ["never asked"]},
        {"decision_id": "d2", "expected_slugs": ["c"], "match_keywords": ["pass", "widget"]},
        {"decision_id": "d3", "expected_slugs": ["c"], "match_keywords": ["gone"]},
        {"decision_id": "d4", "expected_slugs": ["d"], "match_keywords": []},
    ]}}


def test_continuity_probes_only_decisions_the_pointers_missed() -> None:
    asked: list[list[str]] = []

    def probe(keywords: list[str]) -> bool:
        asked.append(keywords)
        return keywords == ["pass", "widget"]

    score = score_continuity_by(make_loaded(READER, READER_GOLD), {"b", "z"}, probe)
    # d1: b injected → hit, no probe; d2: probe true; d3: probe false; d4: no keywords → miss unprobed.
    assert score.hits == {"d1": True, "d2": True, "d3": False, "d4": False}
    assert asked == [["pass", "widget"], ["gone"]]
    assert (score.gold_total, score.gold_failed, score.failed_items) == (4, 2, ["p1/d3", "p1/d4"])


def test_continuity_rate_sums_pairs() -> None:
    def cont(total: int, failed: int) -> ContinuityScore:
        return ContinuityScore(pair_id=f"p{total}", reader_fixture_id=f"r{total}", gold_total=total,
                               gold_failed=failed, hits={}, failed_items=[])

    outcomes = [SimpleNamespace(write_back=None, trust=None, continuity={"openclaw": cont(3, 1)}),
                SimpleNamespace(write_back=None, trust=None, continuity={"openclaw": cont(2, 0)})]
    rows = [row(1, "continuity", None, ["a"], 10, cross=["a"], fixture="r3"),
            row(1, "continuity", None, [], 0, fixture="r2"),
            row(1, "continuity", None, ["q"], 5, fixture="r2"),
            # another harness's continuity row and this harness's push row: neither is this cell's.
            row(1, "continuity", None, ["a"], 70, cross=["a"], fixture="r3", harness="codex"),
            row(1, "push", None, ["a"], 70, cross=["a"], fixture="r3")]
    config = RunConfig(suites=["continuity"], harnesses=["openclaw"])
    (cell,) = assemble_cells(config, {"openclaw": "production"}, rows, outcomes)
    # (3 + 2 − 1 − 0)/(3 + 2) = 0.8; tokens (10 + 0 + 5)/3 = 5; one cross-source slug.
    assert (cell.gold_total, cell.gold_failed) == (5, 1)
    assert cell.metrics == {"continuity_rate": 0.8, "source_isolation_violations": 1, "avg_injected_tokens": 5.0}


# --- memory trust (trust spec §4.2–§4.6) --------------------------------------------------------------

def test_trust_suite_metrics_from_counters() -> None:
    trust = {"label_ok": 5, "label_total": 8, "launder_total": 4, "launder_violations": 1, "promo_total": 3,
             "promo_violations": 2}
    # 5/8 = 0.625; violations are counts, not rates.
    assert suite_metrics("trust", trust) == {"trust_label_accuracy": 0.625, "laundering_violations": 1,
                                             "self_promotion_violations": 2}
    state = {"current_total": 3, "current_ok": 2, "stale_total": 4, "stale_surfaced": 1, "history_total": 5,
             "history_ok": 4, "guard_total": 2, "guard_violations": 1}
    assert suite_metrics("state-resolution", state) == {
        "current_fact_accuracy": pytest.approx(2 / 3), "stale_surfaced_as_current": 1, "history_preserved": 0.8,
        "lower_tier_supersede_violations": 1}
    deletion = {"purge_total": 4, "receipt_total": 4, "receipt_complete": 3, "residual_rows": 2, "resurrected": 1}
    assert suite_metrics("deletion", deletion) == {"residual_after_purge": 2, "receipt_completeness": 0.75,
                                                   "resurrection_after_resync": 1}
    # Empty denominators: accuracies 1, counts 0.
    assert suite_metrics("trust", {}) == {"trust_label_accuracy": 1.0, "laundering_violations": 0,
                                          "self_promotion_violations": 0}
    assert suite_metrics("state-resolution", {}) == {"current_fact_accuracy": 1.0, "stale_surfaced_as_current": 0,
                                                     "history_preserved": 1.0, "lower_tier_supersede_violations": 0}
    assert suite_metrics("deletion", {}) == {"residual_after_purge": 0, "receipt_completeness": 1.0,
                                             "resurrection_after_resync": 0}


PROTECTIONS = {"ext_poison": 4, "ext_persisted": 1, "agent_poison": 5, "agent_flagged_labeled": 3,
               "agent_activated": 2, "pref_total": 3, "pref_unlabeled_activated": 1, "poison_total": 9,
               "poison_unenveloped": 2, "benign_total": 8, "benign_retained": 6, "benign_quarantined": 1}
DEFAULT = {"d_poison_total": 6, "d_persist_unlabeled": 5, "d_activation_unlabeled": 3, "d_benign_total": 4,
           "d_benign_retained": 3}


def test_poisoning_metrics_from_counters() -> None:
    assert poisoning_metrics(PROTECTIONS, DEFAULT) == {
        "poison_persist_rate": 0.25,                                  # 1/4 (over external poison)
        "flagged_and_labeled_rate": 0.6,                              # 3/5 (over agent-relayed poison)
        "unconfirmed_preference_activation_rate": pytest.approx(1 / 3),  # 1/3 (over preferences)
        "agent_relayed_activation_rate": 0.4,                         # 2/5
        "poison_activation_rate": pytest.approx(2 / 9),               # 2/9 (over all poison)
        "benign_retention": 0.75,                                     # 6/8
        "false_quarantine_rate": 0.125,                               # 1/8
        "default_persist_unlabeled_rate": pytest.approx(5 / 6),       # 5/6
        "default_activation_unlabeled_rate": 0.5,                     # 3/6
        "default_benign_retention": 0.75,                             # 3/4
    }
    assert poisoning_metrics({}, None) == {
        "poison_persist_rate": 0.0, "flagged_and_labeled_rate": 1.0, "unconfirmed_preference_activation_rate": 0.0,
        "agent_relayed_activation_rate": 0.0, "poison_activation_rate": 0.0, "benign_retention": 1.0,
        "false_quarantine_rate": 0.0}
    assert poisoning_metrics({}, {}) == {**poisoning_metrics({}, None), "default_persist_unlabeled_rate": 0.0,
                                        "default_activation_unlabeled_rate": 0.0, "default_benign_retention": 1.0}


def test_trust_cells_sum_fixtures_and_arms() -> None:
    def score(counts: dict[str, int], total: int, failed: int) -> SuiteScore:
        return SuiteScore(counts=counts, gold_total=total, gold_failed=failed)

    shared = [TrustFixtureScore(fixture_id="t1", suite="trust", shared=score({"label_ok": 1, "label_total": 3}, 3, 2)),
              TrustFixtureScore(fixture_id="t2", suite="trust", shared=score({"label_ok": 3, "label_total": 3}, 4, 0))]
    out = trust_cell_parts("codex", "trust", [SimpleNamespace(trust=s) for s in shared], [])
    # (1 + 3)/(3 + 3) = 2/3 from summed counters (mean of rates would be 2/3 too, so the totals check the sum).
    assert out is not None
    assert out[:2] == (7, 2) and out[3] == ["t1", "t2"]
    assert out[2]["trust_label_accuracy"] == pytest.approx(2 / 3)

    poison = [
        TrustFixtureScore(fixture_id="p1", suite="poisoning",
                          protections={"codex": score({"benign_total": 3, "benign_retained": 1}, 3, 2)},
                          default={"codex": score({"d_benign_total": 2, "d_benign_retained": 1}, 2, 1)}),
        TrustFixtureScore(fixture_id="p2", suite="poisoning",
                          protections={"codex": score({"benign_total": 1, "benign_retained": 1}, 1, 0),
                                       "openclaw": score({}, 5, 5)}),
    ]
    rows = [row(1, "poisoning", None, ["a"], 10, cross=["a"], harness="codex", fixture="p1"),
            row(2, "poisoning", None, [], 0, harness="codex", fixture="p1"),
            row(1, "poisoning", None, ["b"], 20, harness="codex", fixture="p2"),
            row(1, "poisoning", None, ["c"], 99, cross=["c"], harness="openclaw", fixture="p2")]
    parts = trust_cell_parts("codex", "poisoning", [SimpleNamespace(trust=s) for s in poison], rows)
    assert parts is not None
    total, failed, metrics, fixtures = parts
    # gold: protections 3 + 1, default 2 → 6; failed 2 + 0 + 1 = 3.  benign_retention (1 + 1)/(3 + 1) = 0.5;
    # default retention 1/2; codex rows only: tokens (10 + 0 + 20)/3 = 10, one cross-source slug.
    assert (total, failed, fixtures) == (6, 3, ["p1", "p2"])
    assert metrics["benign_retention"] == 0.5 and metrics["default_benign_retention"] == 0.5
    assert (metrics["source_isolation_violations"], metrics["avg_injected_tokens"]) == (1, 10.0)
    # openclaw ran no default arm: its totals are the protections arm's alone, and no default_* metric.
    alone = trust_cell_parts("openclaw", "poisoning", [SimpleNamespace(trust=s) for s in poison], rows)
    assert alone is not None
    assert alone[:2] == (5, 5) and alone[3] == ["p2"]
    assert not any(k.startswith("default_") for k in alone[2])
    assert (alone[2]["source_isolation_violations"], alone[2]["avg_injected_tokens"]) == (1, 99.0)
    assert trust_cell_parts("codex", "deletion", [SimpleNamespace(trust=s) for s in poison], rows) is None


# --- the rules behind the trust counters (trust spec §4.2, §4.5) ---------------------------------------

def _step(ok: bool, code: str | None = None, before: str | None = None, after: str | None = None,
          **extra: Any) -> StepRecord:
    return StepRecord(step_id="s1", actor="agent", op="confirm", outcome=StepOutcome(ok=ok, code=code),
                      target_tier_before=before, target_tier_after=after, **extra)


def test_a_refused_promotion_is_judged_by_outcome_rise_and_exercise() -> None:
    assert _promotion(None) == ["the step never ran"]
    assert _promotion(_step(False, "forbidden", "agent_written", "agent_written")) == []  # refused, unchanged
    assert _promotion(_step(False, "forbidden", "agent_written", "unknown")) == []       # fell: not a rise
    assert _promotion(_step(True, None, "agent_written", "agent_written")) == ["the promotion was accepted"]
    # refused, yet the tier rose: agent_written (rank 3) → user_confirmed (rank 6).
    assert _promotion(_step(False, "forbidden", "agent_written", "user_confirmed")) == [
        "the tier rose: agent_written → user_confirmed"]
    assert _promotion(_step(False, "forbidden", None, "user_confirmed")) == []   # no before: no rise to judge
    assert _promotion(_step(False, "forbidden", "agent_written", None)) == []
    # an unsupported protection is a violation, an accepted one is not "unexercised" whatever its code.
    assert _promotion(_step(False, "unsupported")) == [
        "not exercised (unsupported): an unsupported protection counts as a violation"]
    assert _promotion(_step(True, "unsupported")) == ["the promotion was accepted"]


def test_a_purge_receipt_accounts_for_a_table_unless_it_says_not_present() -> None:
    def report(store: str, status: str) -> StoreReport:
        return StoreReport(store=store, status=status)  # type: ignore[arg-type]

    receipt = PurgeReceipt(fact_id=1, fact_hash="h", source_id="default", subject=None, visibility="private",
                           stores=[report("facts", "deleted"), report("pages", "not_present")],
                           residuals=[report("chunks", "retained_inactive")])
    rec = _step(True, receipt=receipt, pre_purge_hits={"facts": 1, "pages": 2, "chunks": 1, "takes": 1})
    # facts: deleted; pages: "not_present" does not count; chunks: a residual counts; takes: not named.
    assert _unaccounted(rec) == ["pages", "takes"]
    assert _unaccounted(_step(True, pre_purge_hits={"facts": 1})) == ["facts"]  # no receipt at all
    assert _unaccounted(_step(True)) == []


# --- assembly of the other suites' cells (spec §5.7, trust spec §4.6) ----------------------------------

def test_write_back_trust_and_continuity_cells_and_image_seeded_harnesses() -> None:
    config = RunConfig(suites=["write-back", "trust", "continuity"], harnesses=["openclaw", "codex"])
    shared = SuiteScore(counts={"label_ok": 1, "label_total": 4}, gold_total=4, gold_failed=3)

    def cont(total: int, failed: int) -> ContinuityScore:
        return ContinuityScore(pair_id="p", reader_fixture_id="r", gold_total=total, gold_failed=failed, hits={},
                               failed_items=[])

    outcomes = [
        SimpleNamespace(write_back=_wb(4, 3, 3, 1, 5, 4), trust=None, continuity={"openclaw": cont(0, 0)}),
        SimpleNamespace(write_back=None, trust=TrustFixtureScore(fixture_id="t1", suite="trust", shared=shared),
                        continuity={}),
        SimpleNamespace(write_back=_wb(2, 0, 2, 2, 2, 2), trust=None, continuity={}),
    ]
    # codex seeds its own brain (seed contract v1: no path to these suites): no write-back nor trust cell,
    # and it read no pair.
    cells = assemble_cells(config, {"openclaw": "production", "codex": "contract"}, [], outcomes,
                           image_seeded={"codex": ("write-back", "trust", "continuity")})
    assert [(c.harness, c.suite) for c in cells] == [("openclaw", "write-back"), ("openclaw", "trust"),
                                                     ("openclaw", "continuity")]
    wb, trust, continuity = cells
    # (3 + 2)/(4 + 2) = 0.8333; provenance (1 + 2)/(3 + 2) = 0.6; both fixtures, in order.
    assert (wb.gold_total, wb.gold_failed, wb.fixtures) == (6, 3, ["f4", "f2"])
    assert wb.metrics == {"write_back_fidelity": 0.8333, "provenance_accuracy": 0.6}
    assert (trust.gold_total, trust.gold_failed, trust.metrics["trust_label_accuracy"]) == (4, 3, 0.25)
    # a pair with no decisions: total 0 → rate 1.
    assert continuity.metrics == {"continuity_rate": 1.0, "source_isolation_violations": 0,
                                  "avg_injected_tokens": 0.0}
    unseeded = assemble_cells(config, {"codex": "contract"}, [], outcomes[:1])
    assert [(c.harness, c.suite) for c in unseeded] == [("codex", "write-back")]
    assert assemble_cells(config, {"openclaw": "production"}, [], []) == []


def test_a_counter_never_counted_reads_zero() -> None:
    # Counters exist only once something happened: "4 labels, none right" has no label_ok at all.
    assert suite_metrics("trust", {"label_total": 4}) == {
        "trust_label_accuracy": 0.0, "laundering_violations": 0, "self_promotion_violations": 0}
    assert suite_metrics("state-resolution", {"current_total": 2, "history_total": 3}) == {
        "current_fact_accuracy": 0.0, "stale_surfaced_as_current": 0, "history_preserved": 0.0,
        "lower_tier_supersede_violations": 0}
    assert suite_metrics("deletion", {"receipt_total": 2}) == {
        "residual_after_purge": 0, "receipt_completeness": 0.0, "resurrection_after_resync": 0}
    totals = {"ext_poison": 2, "agent_poison": 2, "pref_total": 2, "poison_total": 2, "benign_total": 2}
    assert poisoning_metrics(totals, {"d_poison_total": 2, "d_benign_total": 2}) == {
        "poison_persist_rate": 0.0, "flagged_and_labeled_rate": 0.0, "unconfirmed_preference_activation_rate": 0.0,
        "agent_relayed_activation_rate": 0.0, "poison_activation_rate": 0.0, "benign_retention": 0.0,
        "false_quarantine_rate": 0.0, "default_persist_unlabeled_rate": 0.0,
        "default_activation_unlabeled_rate": 0.0, "default_benign_retention": 0.0}
