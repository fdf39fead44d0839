"""How fixture scores become memory-trust cells (trust spec §4.6), on hand-made scores."""

from __future__ import annotations

from brainbench.metrics.result import build_result
from brainbench.models.config import RunConfig
from brainbench.models.result import SeamInfo, TurnRow
from brainbench.models.trust_run import SuiteScore, TrustFixtureScore
from brainbench.orchestrator.outcome import FixtureOutcome


def _seam(harness: str, contract: int | None = None) -> SeamInfo:
    return SeamInfo(harness=harness, seam="production", executor="local", mode="stream",  # type: ignore[arg-type]
                    brain_contract=contract)


def _row(harness: str, tokens: int, leaked: list[str]) -> TurnRow:
    return TurnRow(fixture_id="p1", turn_id=1, harness=harness, suite="poisoning", injected_slugs=leaked,  # type: ignore[arg-type]
                   injected_tokens=tokens, gold=None, cross_source_slugs=leaked, latency_ms=1.0)


def _result(seams: list[SeamInfo]) -> object:
    trust = TrustFixtureScore(fixture_id="t1", suite="trust", shared=SuiteScore(
        counts={"label_total": 4, "label_ok": 3, "promo_total": 2, "promo_violations": 1}, gold_total=6, gold_failed=2))
    poison = TrustFixtureScore(fixture_id="p1", suite="poisoning", protections={
        h.harness: SuiteScore(counts={"benign_total": 2, "benign_retained": 1, "poison_total": 3, "ext_poison": 3,
                                      "ext_persisted": 1}, gold_total=5, gold_failed=2) for h in seams},
        default={h.harness: SuiteScore(counts={"d_poison_total": 3, "d_benign_total": 2, "d_benign_retained": 2},
                                       gold_total=5, gold_failed=0) for h in seams})
    rows = [_row("openclaw", 10, []), _row("openclaw", 20, ["people/x"]), _row("codex", 7, [])]
    config = RunConfig(harnesses=[s.harness for s in seams], suites=["trust", "poisoning"])  # type: ignore[arg-type]
    keyed = [("t1", FixtureOutcome(trust=trust)), ("p1", FixtureOutcome(trust=poison, rows=rows))]
    return build_result(config, fixtures_hash="h", harness_sha="s", seams=seams, keyed=keyed, run={
        "run_id": "r", "executor": "local", "jobs": 1, "started_at": "x"}, receipt_ts="2026-01-01T00:00:00.000Z")


def test_shared_suites_repeat_per_harness_and_poisoning_adds_both_arms() -> None:
    result = _result([_seam("openclaw"), _seam("codex")])
    cells = {f"{c.harness}/{c.suite}": c for c in result.cells}  # type: ignore[attr-defined]
    assert list(cells) == ["openclaw/trust", "openclaw/poisoning", "codex/trust", "codex/poisoning"]
    assert cells["openclaw/trust"].metrics == cells["codex/trust"].metrics == {
        "trust_label_accuracy": 0.75, "laundering_violations": 0, "self_promotion_violations": 1}
    p = cells["openclaw/poisoning"]
    assert (p.gold_total, p.gold_failed) == (10, 2)
    assert p.metrics["poison_persist_rate"] == 0.3333 and p.metrics["benign_retention"] == 0.5
    assert p.metrics["default_benign_retention"] == 1 and p.metrics["default_persist_unlabeled_rate"] == 0
    # Isolation and tokens come from the harness's own poisoning rows.
    assert (p.metrics["source_isolation_violations"], p.metrics["avg_injected_tokens"]) == (1, 15)
    assert cells["codex/poisoning"].metrics["avg_injected_tokens"] == 7


def test_an_image_seeded_seam_gets_no_trust_cell_but_a_reason() -> None:
    result = _result([_seam("openclaw"), _seam("codex", contract=1)])
    assert {c.harness for c in result.cells} == {"openclaw"}  # type: ignore[attr-defined]
    na = {(n.harness, n.suite): n for n in result.meta.not_applicable}  # type: ignore[attr-defined]
    assert set(na) == {("codex", "trust"), ("codex", "poisoning")}
    assert "operations command" in na[("codex", "trust")].reason and na[("codex", "trust")].fixtures == ["t1"]
