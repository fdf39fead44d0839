"""The regression gate: compare a run's canonical baseline against main's.

Spec §10.2 (gbrain ``scoreboard.ts: compareBaselines``), implemented step by step
in the spec's order; each step is commented with its number.  The gate exists so
that every memory change moves, or holds with a recorded justification, a number --
and so that a change cannot approve itself: CI compares against *main's* copy of
the baseline, and an edited committed baseline must match the actual run.

One deliberate tightening over gbrain (told to the lead): a source-isolation
breach is never downgraded to ``pass`` by a justification or ``--allow-regression``.
It is a data-leak invariant ("must be 0 regardless of baseline"), not a trade-off a
reviewer can bless.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Literal

from brainbench.gate.baseline import serialize_baseline
from brainbench.jsjson import js_number, round4
from brainbench.metrics.retrieval import failed_items_by_cell
from brainbench.models.result import Breach, CompareOutcome, Verdict

if TYPE_CHECKING:
    from brainbench.models.baseline import Baseline
    from brainbench.models.result import RunResult

__all__ = [
    "EXIT_CODES",
    "GATED_METRICS",
    "ISOLATION_METRIC",
    "ZERO_GATED_METRICS",
    "compare_baselines",
    "exit_code_for",
    "failed_items",
    "newly_failed_items",
]

Direction = Literal["lower", "higher"]

ISOLATION_METRIC = "source_isolation_violations"

# Which way is "better" for every gated metric.  avg_injected_tokens is never gated:
# spending more or fewer tokens is a cost trade-off, not a regression.
GATED_METRICS: dict[str, Direction] = {
    "know_to_ask_failure_rate": "lower",
    "false_fire_rate": "lower",
    "push_precision": "higher",
    "push_recall": "higher",
    "write_back_fidelity": "higher",
    "provenance_accuracy": "higher",
    "continuity_rate": "higher",
    "extraction_recall": "higher",
    "extraction_precision": "higher",
    ISOLATION_METRIC: "lower",
    # The memory-trust suites (gbrain 0.60).
    "trust_label_accuracy": "higher",
    "laundering_violations": "lower",
    "self_promotion_violations": "lower",
    "current_fact_accuracy": "higher",
    "stale_surfaced_as_current": "lower",
    "history_preserved": "higher",
    "lower_tier_supersede_violations": "lower",
    "poison_persist_rate": "lower",
    "flagged_and_labeled_rate": "higher",
    "unconfirmed_preference_activation_rate": "lower",
    "agent_relayed_activation_rate": "lower",
    "poison_activation_rate": "lower",
    "benign_retention": "higher",
    "false_quarantine_rate": "lower",
    "default_persist_unlabeled_rate": "lower",
    "default_activation_unlabeled_rate": "lower",
    "default_benign_retention": "higher",
    "residual_after_purge": "lower",
    "receipt_completeness": "higher",
    "resurrection_after_resync": "lower",
}

# Invariants, not trade-offs: any value above zero is a breach in every run, whatever main says
# (even for a cell main never had), and a justification cannot bless it.
ZERO_GATED_METRICS: tuple[str, ...] = (
    ISOLATION_METRIC, "laundering_violations", "self_promotion_violations", "stale_surfaced_as_current",
    "lower_tier_supersede_violations", "poison_persist_rate", "unconfirmed_preference_activation_rate",
    "agent_relayed_activation_rate", "poison_activation_rate", "default_persist_unlabeled_rate",
    "default_activation_unlabeled_rate", "residual_after_purge", "resurrection_after_resync",
)

EXIT_CODES: dict[Verdict, int] = {"pass": 0, "regression": 1, "inconclusive": 2}

NOTE_UPDATE_BASELINE = "run `--update-baseline` and commit the result"


def exit_code_for(verdict: Verdict) -> int:
    """pass 0, regression 1, inconclusive 2."""
    return EXIT_CODES[verdict]


def _data(b: Baseline) -> str:
    """The baseline's numbers and config, justification excluded."""
    return serialize_baseline(b, include_justification=False)


def _config_diffs(current: Baseline, main: Baseline, same_hash: bool) -> list[str]:
    """Why the two runs' numbers are not comparable (none: they are).  In corpus-bless mode a run may
    add suites (a corpus that grew new suites), never drop one; under the same hash suites must match."""
    diffs: list[str] = []
    cur, ref = current.config, main.config
    # Lists are compared as JSON arrays: order and duplicates both count.
    for name in ("include_holdout", "llm", "harnesses", "suites"):
        a, b = getattr(ref, name), getattr(cur, name)
        if name == "suites" and not same_hash and set(a) <= set(b):
            continue
        if a != b:
            diffs.append(f"{name} main={json.dumps(a)} current={json.dumps(b)}")
    return diffs


def _outcome(
    verdict: Verdict, mode: str, breaches: list[Breach], notes: list[str]
) -> CompareOutcome:
    return CompareOutcome(verdict=verdict, mode=mode, breaches=breaches, notes=notes)  # type: ignore[arg-type]


def _bless(
    mode: str, breaches: list[Breach], notes: list[str], reason_note: str
) -> CompareOutcome:
    """Downgrade breaches to pass with the reason recorded -- except zero-gated ones."""
    if any(b.metric == ISOLATION_METRIC for b in breaches):
        notes.append(
            "source isolation breaches cannot be blessed or allowed (data-leak invariant); "
            f"ignored: {reason_note}"
        )
        return _outcome("regression", mode, breaches, notes)
    if any(b.metric in ZERO_GATED_METRICS for b in breaches):
        notes.append(f"memory-trust invariants gate at zero and cannot be blessed or allowed; ignored: {reason_note}")
        return _outcome("regression", mode, breaches, notes)
    notes.append(reason_note)
    return _outcome("pass", mode, breaches, notes)


def compare_baselines(
    current: Baseline,
    main: Baseline,
    *,
    allow_regression: str | None = None,
    committed: Baseline | None = None,
    fresh_corpus: bool = False,
) -> CompareOutcome:
    """Gate ``current`` (this run, canonical, no justification) against ``main``.

    ``committed`` is the baseline file in the working tree (the PR's copy); it is
    what bless mode and same-hash hardening check against the actual run.
    ``fresh_corpus``: this run graded a corpus generated at grading time; against a baseline of
    another corpus that is :func:`_fresh_corpus_outcome`, against one of the same seed the usual gate.
    """
    breaches: list[Breach] = []
    notes: list[str] = []

    # 1. The zero-gated metrics at zero, regardless of main (isolation first, as gbrain lists them).
    for name in ZERO_GATED_METRICS:
        for key, metrics in current.cells.items():
            value = metrics.get(name)
            if value is not None and value > 0:
                detail = ("data-leak invariant: must be 0 regardless of baseline" if name == ISOLATION_METRIC
                          else "memory-trust invariant — gates at zero")
                breaches.append(Breach(cell=key, metric=name, main=0, current=value, detail=detail))

    # 2. Mode.
    same_hash = current.fixtures_hash == main.fixtures_hash
    mode = "same-hash" if same_hash else "corpus-bless"
    if fresh_corpus and not same_hash:
        return _fresh_corpus_outcome(current, main, breaches, notes)

    # 3. Config binding: numbers from different configs are not comparable.  Ours on top of
    #    gbrain's: the release our seams behaved like (what they inject differs between them).
    diffs = _config_diffs(current, main, same_hash)
    if diffs:
        notes.append(f"run config mismatch: {'; '.join(diffs)} — compare like with like")
    mine, theirs = current.config.effective_behaviour, main.config.effective_behaviour
    if mine != theirs:
        notes.append(f"behaviour mismatch: main's baseline was made with gbrain {theirs}'s behaviour, this run "
                     f"followed gbrain {mine}'s — re-run with --behaviour {theirs} to gate against it, or "
                     f"regenerate it with --behaviour {mine} --update-baseline")
    if diffs or mine != theirs:
        return _outcome("inconclusive", mode, breaches, notes)

    # 4. Counts.  Cells present only in the current run are ignored.
    for key, ref in main.counts.items():
        cur = current.counts.get(key)
        if cur is None:
            breaches.append(
                Breach(
                    cell=key,
                    metric="gold_failed",
                    main=ref.gold_failed,
                    current=None,  # gbrain: NaN, which JSON.stringify writes as null
                    detail="cell missing from current run (suite/harness coverage disappeared)",
                )
            )
            continue
        if same_hash:
            if cur.gold_failed > ref.gold_failed:
                n = cur.gold_failed - ref.gold_failed
                breaches.append(
                    Breach(
                        cell=key,
                        metric="gold_failed",
                        main=ref.gold_failed,
                        current=cur.gold_failed,
                        detail=f"{n} newly-failed gold item(s)",
                    )
                )
            if cur.gold_total != ref.gold_total:
                breaches.append(
                    Breach(
                        cell=key,
                        metric="gold_total",
                        main=ref.gold_total,
                        current=cur.gold_total,
                        detail="scoring coverage changed WITHOUT a fixture change",
                    )
                )
        elif cur.gold_total < ref.gold_total:
            breaches.append(
                Breach(
                    cell=key,
                    metric="gold_total",
                    main=ref.gold_total,
                    current=cur.gold_total,
                    detail=(
                        f"gold coverage shrank ({ref.gold_total} → {cur.gold_total}) — "
                        "possible corpus hollowing"
                    ),
                )
            )

    # 5. Gated metrics present in both, compared on the 4-dp values.
    for key, ref_metrics in main.cells.items():
        cur_metrics = current.cells.get(key)
        if cur_metrics is None:
            continue
        for name, ref_value in ref_metrics.items():
            direction = GATED_METRICS.get(name)
            if direction is None or name in ZERO_GATED_METRICS or name not in cur_metrics:
                continue
            a, b = round4(ref_value), round4(cur_metrics[name])
            if direction == "lower" and b > a:
                detail = f"rose {js_number(round4(abs(b - a)))}"
            elif direction == "higher" and b < a:
                detail = f"fell {js_number(round4(abs(b - a)))}"
            else:
                continue
            breaches.append(
                Breach(cell=key, metric=name, main=ref_value, current=cur_metrics[name], detail=detail)
            )

    # 6. Corpus-bless mode: the corpus changed, so main's numbers are history; the
    #    committed baseline must be exactly this run, and a regression needs a reason.
    if not same_hash:
        notes.append(
            f"fixtures_hash changed ({main.fixtures_hash[:12]} → {current.fixtures_hash[:12]})"
            " — corpus-bless mode"
        )
        if committed is None:
            notes.append(f"no committed baseline for the new corpus — {NOTE_UPDATE_BASELINE}")
            return _outcome("inconclusive", mode, breaches, notes)
        expected = current.model_copy(update={"justification": committed.justification})
        if serialize_baseline(committed) != serialize_baseline(expected):
            notes.append(f"committed baseline does not match this run — {NOTE_UPDATE_BASELINE}")
            return _outcome("inconclusive", mode, breaches, notes)
        if breaches:
            if not committed.justification and not allow_regression:
                notes.append(
                    "metrics regressed with the corpus change and the committed baseline has no "
                    "`justification` — re-run `--update-baseline --justification \"…\"` and commit"
                )
                return _outcome("regression", mode, breaches, notes)
            reason = committed.justification or allow_regression
            return _bless(mode, breaches, notes, f"regression blessed: {reason}")
        return _outcome("pass", mode, breaches, notes)

    # 7. Same-hash hardening: a committed baseline that differs from main's must be
    #    receipts-backed, i.e. exactly what this run produced.
    if committed is not None and _data(committed) != _data(main):
        if _data(committed) != _data(current):
            notes.append(
                "committed baseline differs from main's but not by this run's numbers — it must be "
                "receipts-backed (`--update-baseline`) or reverted"
            )
            return _outcome("inconclusive", mode, breaches, notes)
        notes.append("committed baseline updated (matches this run) — the diff vs main is the visible delta")
        if breaches and committed.justification and not allow_regression:
            return _bless(mode, breaches, notes, f"regression blessed: {committed.justification}")
        if breaches and not allow_regression:
            notes.append("the updated baseline regresses vs main and carries no `justification`")

    # 8. What remains.
    if breaches and allow_regression:
        return _bless(mode, breaches, notes, f"regression allowed: {allow_regression}")
    if breaches:
        return _outcome("regression", mode, breaches, notes)
    return _outcome("pass", mode, breaches, notes)


def _fresh_corpus_outcome(current: Baseline, main: Baseline, breaches: list[Breach],
                          notes: list[str]) -> CompareOutcome:
    """A fresh corpus against a baseline of another corpus: gate what no corpus can change.

    Its items are other items, so counts and metric values are samples of the same rules, not the
    same measurement: no adverse move is a regression and no equal number a pass.  What is gated
    holds on any corpus: source isolation at zero (step 1), the run config, and every cell of main
    still measured.  With those holding the verdict is inconclusive (exit 2) and says how to gate
    fully: a baseline made from the same seed.  A corpus can never be blessed here.
    """
    mode = "fresh-corpus"
    notes.append(f"fresh corpus {current.fixtures_hash[:12]} against a baseline of corpus {main.fixtures_hash[:12]}: "
                 "only seed-independent invariants are gated (source isolation at zero, the run config, every "
                 "cell of main measured); counts and metrics of two corpora are not comparable")
    diffs = _config_diffs(current, main, same_hash=False)  # another corpus: it may add suites, as in bless mode
    if diffs:
        notes.append(f"run config mismatch: {'; '.join(diffs)} — compare like with like")
        return _outcome("inconclusive", mode, breaches, notes)
    for key, ref in main.counts.items():
        if key not in current.counts:
            breaches.append(Breach(cell=key, metric="gold_failed", main=ref.gold_failed, current=None,
                                   detail="cell missing from current run (suite/harness coverage disappeared)"))
    moved = []
    for key, ref_metrics in main.cells.items():
        for name, ref_value in ref_metrics.items():
            direction = GATED_METRICS.get(name)
            value = current.cells.get(key, {}).get(name)
            if direction is None or name == ISOLATION_METRIC or value is None:
                continue
            a, b = round4(ref_value), round4(value)
            if (direction == "lower" and b > a) or (direction == "higher" and b < a):
                moved.append(f"{key} {name} {js_number(a)} → {js_number(b)}")
    if moved:
        notes.append("moved adversely, not gated on a fresh corpus: " + "; ".join(moved))
    if breaches:
        return _outcome("regression", mode, breaches, notes)
    notes.append("invariants hold; for a full gate compare with a baseline of the same corpus: "
                 "`run --fresh-corpus SEED --update-baseline FILE` with main's system, then "
                 "`run --fresh-corpus SEED --compare FILE`")
    return _outcome("inconclusive", mode, breaches, notes)


# --- naming failed gold items from turn rows ---------------------------------------

def failed_items(result: RunResult) -> dict[str, list[str]]:
    """Failed gold items per ``harness/suite`` cell, named from the run's turn rows.

    The scorers name them as gbrain does (``fixture#turn``, ``… (false fire)``,
    ``… missing <slug>``).  Write-back and continuity keep their failures outside
    turn rows, so those cells are not itemised here.
    """
    return failed_items_by_cell(result.turn_rows)


def newly_failed_items(current: RunResult, main: RunResult | None) -> dict[str, list[str]]:
    """Items failing in ``current`` but not in ``main`` (all of them without ``main``)."""
    now = failed_items(current)
    if main is None:
        return now
    before = failed_items(main)
    out: dict[str, list[str]] = {}
    for key, names in now.items():
        old = set(before.get(key, ()))
        new = [n for n in names if n not in old]
        if new:
            out[key] = new
    return out

