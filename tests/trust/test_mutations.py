"""Every gated memory-trust metric catches the breakage of the protection it measures.

For each metric, one protection of our reference memory system is broken (the test-only switch of
``mutations.py``, or a ``before_step`` probe as in gbrain's mutation suite), the slice of the trust
corpus is run through the real CLI against the unbroken run's baseline, and the gate must exit 1
with that metric among its breaches.  Seams are silent, so every proactive sighting is the memory
system's own context pack, and the unbroken run passes its own gate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import HERE, TRUST_SUITES, run_cli, slice_corpus

# gbrain's mutation slice (trust spec §4.7), with gen-state-008 (v3) for the held-out gen-state-004.
SLICE = ("gen-trust-001", "gen-trust-002", "gen-trust-003", "gen-trust-004", "gen-state-001", "gen-state-002",
         "gen-state-003", "gen-state-008", "gen-poison-ext-001", "gen-poison-agent-001", "gen-poison-agent-003",
         "gen-del-001", "gen-del-002", "gen-del-003")
DRIVER = (str(HERE / "mutant_cli.py"),)

# (mutations, {cell suite: metrics that must breach}): together they cover every gated trust metric.
CASES = {
    "agent writes stamped as owner-curated": (
        "agent_writes_owner_tier", {"trust": {"trust_label_accuracy", "laundering_violations"}}),
    "no tier trigger in the database": (
        "tier_trigger_dropped", {"trust": {"trust_label_accuracy", "laundering_violations"}}),
    "an agent connection holds the confirm scope": (
        "agent_holds_confirm_scope", {"trust": {"self_promotion_violations"}}),
    "corrections lose their replaces": (
        "ignore_replaces", {"state-resolution": {"stale_surfaced_as_current", "history_preserved"}}),
    "a lower tier supersedes": (
        "lower_tier_supersedes", {"state-resolution": {"lower_tier_supersede_violations", "current_fact_accuracy"}}),
    "a remote agent forgets the owner's fact": (
        "remote_forget_unguarded", {"state-resolution": {"lower_tier_supersede_violations",
                                                         "current_fact_accuracy"}}),
    "external gate off": ("external_gate_off", {"poisoning": {"poison_persist_rate"}}),
    "agent gate off": (
        "agent_gate_off", {"poisoning": {"flagged_and_labeled_rate", "agent_relayed_activation_rate",
                                         "poison_activation_rate", "unconfirmed_preference_activation_rate"}}),
    "activation allowed on the protections brain": (
        "activation_allow", {"poisoning": {"agent_relayed_activation_rate"}}),
    "a detector that flags everything": (
        "detector_flags_everything", {"poisoning": {"false_quarantine_rate", "benign_retention"}}),
    "every tripped external write rejected, and everything trips": (
        "detector_flags_everything,external_gate_reject", {"poisoning": {"default_benign_retention"}}),
    "every insert stamped operator_curated": (
        "insert_owner_tier", {"poisoning": {"default_persist_unlabeled_rate", "default_activation_unlabeled_rate"}}),
    "the purge skips the chunks": (
        "purge_skips_chunks", {"deletion": {"residual_after_purge", "receipt_completeness"}}),
    "the purge skips the request journal": (
        "purge_skips_journal", {"deletion": {"residual_after_purge", "receipt_completeness"}}),
    "the tombstone is dropped": ("drop_tombstone", {"deletion": {"resurrection_after_resync"}}),
    "the claim is copied into config before the purge": (
        "claim_into_config", {"deletion": {"residual_after_purge", "receipt_completeness"}}),
}


def _args(fx: Path, gd: Path, out: Path) -> list[str | Path]:
    return ["run", "--quiet", "--harness", "openclaw", "--fixtures", fx, "--gold", gd, "--suite", TRUST_SUITES,
            "--out", out]


@pytest.fixture(scope="module")
def sliced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    root = tmp_path_factory.mktemp("slice")
    fx, gd = slice_corpus(root, SLICE)
    base = root / "base.json"
    clean = run_cli([*_args(fx, gd, root / "clean.json"), "--update-baseline", base], silent=True, cwd=root)
    assert clean.returncode == 0 and base.is_file(), clean.stderr
    again = run_cli([*_args(fx, gd, root / "again.json"), "--compare", base], silent=True, cwd=root)
    assert again.returncode == 0, again.stderr  # the unbroken system passes its own gate
    return fx, gd, base


def test_the_cases_cover_every_gated_trust_metric() -> None:
    from brainbench.gate.compare import GATED_METRICS

    covered = {metric for _, cells in CASES.values() for metrics in cells.values() for metric in metrics}
    trust_metrics = set(list(GATED_METRICS)[list(GATED_METRICS).index("trust_label_accuracy"):])
    assert covered == trust_metrics


def test_no_command_line_option_reaches_the_mutation_switch() -> None:
    proc = run_cli(["run", "--help"])
    assert proc.returncode == 0 and "mutat" not in proc.stdout.lower()
    assert "mutat" not in json.dumps(__import__("brainbench.models.config", fromlist=["RunConfig"])
                                     .RunConfig.model_json_schema()).lower()


@pytest.mark.parametrize("case", list(CASES))
def test_breaking_the_protection_breaches_its_metric(case: str, sliced: tuple[Path, Path, Path],
                                                      tmp_path: Path) -> None:
    fx, gd, base = sliced
    names, expected = CASES[case]
    out = tmp_path / "result.json"
    proc = run_cli([names, *_args(fx, gd, out), "--compare", base], silent=True, driver=DRIVER, cwd=tmp_path)
    assert proc.returncode == 1, f"{case}: exit {proc.returncode}\n{proc.stderr}"
    doc: dict[str, Any] = json.loads(out.read_text())
    breached = {(b["cell"], b["metric"]) for b in doc["_meta"]["compare"]["breaches"]}
    for suite, metrics in expected.items():
        missing = {m for m in metrics if (f"openclaw/{suite}", m) not in breached}
        assert not missing, f"{case}: {sorted(missing)} did not breach; breaches: {sorted(breached)}"
