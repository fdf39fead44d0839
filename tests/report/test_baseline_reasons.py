"""Every failed gold item of the committed baseline's run has a reason: all are budget overflows."""

from __future__ import annotations

import json
import re
from pathlib import Path

from brainbench.report.reasons import item_reasons
from brainbench.report.trace_file import load_result

from .conftest import REPO, bench

BUDGET = {"openclaw": "budget 3 pointers", "codex": "budget 1 pointer;"}


def test_the_baselines_failures_are_all_explained_as_budget_overflow(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = bench("run", "--suite", "push", "--out", out, "--quiet", "--format", "markdown", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    baseline = json.loads((REPO / "baselines" / "main.json").read_text())
    items = item_reasons(load_result(out))
    by_cell: dict[str, int] = {}
    for r in items:
        by_cell[r.cell] = by_cell.get(r.cell, 0) + 1
        assert r.verdict == "budget", (r.item, r.reason)
        assert re.search(r"dropped by the pointer budget \(rank (\d+) of (\d+), ", r.reason), r.reason
        assert BUDGET[r.harness] in r.reason, r.reason
    # The same failures the committed baseline counts: openclaw 13, codex 43, claude-code none.
    assert by_cell == {cell: c["gold_failed"] for cell, c in baseline["counts"].items()
                       if cell.endswith("/push") and c["gold_failed"]}
