"""Builders for run results and baselines shared by the gate tests."""

from __future__ import annotations

from typing import Any

from brainbench.models.baseline import Baseline
from brainbench.models.result import Cell, Receipt, RunResult, SeedFailure, TurnRow

HASH_A = "509fd20d7cda" + "a" * 52
HASH_B = "76f2" + "b" * 60

# gbrain's committed main.json numbers for two cells (spec §8.2), enough to
# exercise every gate branch without a corpus.
KTA_METRICS = {
    "know_to_ask_failure_rate": 0,
    "false_fire_rate": 0,
    "source_isolation_violations": 0,
    "avg_injected_tokens": 5703 / 149,
}
PUSH_METRICS = {
    "push_precision": 1,
    "push_recall": 87 / 96,
    "source_isolation_violations": 0,
    "avg_injected_tokens": 5359 / 107,
}


def make_cell(harness: str, suite: str, metrics: dict[str, float], total: int, failed: int) -> Cell:
    return Cell(
        suite=suite,  # type: ignore[arg-type]
        harness=harness,  # type: ignore[arg-type]
        seam="contract" if harness == "codex" else "production",
        gold_total=total,
        gold_failed=failed,
        metrics=metrics,
        fixtures=["kta-001"],
    )


def make_result(
    cells: list[Cell] | None = None,
    *,
    fixtures_hash: str = HASH_A,
    include_holdout: bool = False,
    turn_rows: list[TurnRow] | None = None,
    seed_failures: list[SeedFailure] | None = None,
    harness_sha: str = "deadbeef",
    cmd_args: list[str] | None = None,
) -> RunResult:
    if cells is None:
        cells = [
            make_cell("openclaw", "know-to-ask", dict(KTA_METRICS), 149, 0),
            make_cell("openclaw", "push", dict(PUSH_METRICS), 96, 9),
        ]
    return RunResult(
        receipt=Receipt(
            fixtures_hash=fixtures_hash,
            harness_sha=harness_sha,
            ts="2026-08-22T00:00:00.000Z",
            cmd_args=cmd_args or ["--out", "x.json"],
            seed=42,
            include_holdout=include_holdout,
            llm=False,
        ),
        cells=cells,
        turn_rows=turn_rows or [],
        seed_failures=seed_failures or [],
    )


def row(
    fixture: str, turn: int, suite: str, injected: list[str], gold: dict[str, Any] | None,
    harness: str = "openclaw",
) -> TurnRow:
    return TurnRow.model_validate(
        {
            "fixture_id": fixture,
            "turn_id": turn,
            "harness": harness,
            "suite": suite,
            "injected_slugs": injected,
            "injected_tokens": 10,
            "gold": gold,
            "cross_source_slugs": [],
            "latency_ms": 1.0,
        }
    )


def baseline(
    *,
    fixtures_hash: str = HASH_A,
    harnesses: list[str] | None = None,
    suites: list[str] | None = None,
    include_holdout: bool = False,
    cells: dict[str, dict[str, float]] | None = None,
    counts: dict[str, tuple[int, int]] | None = None,
    justification: str | None = None,
) -> Baseline:
    """A canonical-looking baseline; counts are (gold_total, gold_failed)."""
    cells = cells if cells is not None else {
        "openclaw/know-to-ask": {
            "avg_injected_tokens": 38.2752,
            "false_fire_rate": 0,
            "know_to_ask_failure_rate": 0,
            "source_isolation_violations": 0,
        },
        "openclaw/push": {
            "avg_injected_tokens": 50.0841,
            "push_precision": 1,
            "push_recall": 0.9063,
            "source_isolation_violations": 0,
        },
    }
    counts = counts if counts is not None else {"openclaw/know-to-ask": (149, 0), "openclaw/push": (96, 9)}
    return Baseline.model_validate(
        {
            "schema_version": 1,
            "fixtures_hash": fixtures_hash,
            "config": {
                "include_holdout": include_holdout,
                "llm": False,
                "harnesses": harnesses or ["openclaw"],
                "suites": suites or ["know-to-ask", "push"],
            },
            "justification": justification,
            "cells": cells,
            "counts": {k: {"gold_total": t, "gold_failed": f} for k, (t, f) in counts.items()},
        }
    )

