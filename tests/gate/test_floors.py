"""The executable floors hold on gbrain 0.60's committed baseline, and each one bites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.gate.floors import TRUST_FLOORS, floor_violations

MAIN_060 = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust" / "main.json"


def _cells() -> dict[str, dict[str, float]]:
    return json.loads(MAIN_060.read_text())["cells"]  # type: ignore[no-any-return]


def test_gbrain_060s_baseline_clears_every_floor() -> None:
    assert floor_violations(_cells()) == []


@pytest.mark.parametrize(("key", "metric", "value"), [
    ("openclaw/push", "push_recall", 0.9063),  # gbrain v0.46's number: below 0.95 since the volunteer arm
    ("codex/continuity", "avg_injected_tokens", 197.5),
    ("codex/know-to-ask", "avg_injected_tokens", 0),
    ("claude-code/poisoning", "benign_retention", 0.94),
    ("claude-code/poisoning", "false_quarantine_rate", 0.03),
    ("openclaw/deletion", "residual_after_purge", 1),
    ("codex/trust", "trust_label_accuracy", 0.9714),
])
def test_each_floor_bites(key: str, metric: str, value: float) -> None:
    cells = _cells()
    cells[key][metric] = value
    [line] = floor_violations(cells)
    assert line.startswith(f"{key}: {metric}")


def test_a_trust_cell_missing_a_metric_fails() -> None:
    cells = _cells()
    del cells["openclaw/state-resolution"]["history_preserved"]
    assert floor_violations(cells) == ["openclaw/state-resolution: history_preserved missing"]
    assert sum(len(m) for m in TRUST_FLOORS.values()) == 21
