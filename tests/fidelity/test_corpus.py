"""Issue 30 end to end: ``brainbench run`` on tests/data/fidelity30/corpus equals gbrain's own run of it.

Every fixture leans on one rule (scripts/fidelity/corpus.py says which); gbrain's result
(``corpus/expected-gbrain.json``, PROVENANCE.md) is compared row by row -- injected slugs,
injected tokens, gold, cross-source slugs for every (fixture, turn, harness, suite) -- then
cell by cell (write-back and continuity included), then the fixtures that failed to seed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import DATA

CORPUS = DATA / "corpus"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Any]:
    out: Path = tmp_path_factory.mktemp("fidelity30") / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run(
        [sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(CORPUS / "fixtures"),
         "--gold", str(CORPUS / "gold"), "--json", "--out", str(out), "--jobs", "2", "--quiet",
         "--behaviour", "0.46"],  # the expectations are gbrain v0.46's output
        capture_output=True, text=True, timeout=900, check=False, env=env)
    assert out.exists(), proc.stderr
    expected = json.loads((CORPUS / "expected-gbrain.json").read_text(encoding="utf-8"))
    return proc, json.loads(out.read_text(encoding="utf-8")), expected


def _rows(doc: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {(r["fixture_id"], r["turn_id"], r["harness"], r["suite"]): {k: v for k, v in r.items() if k != "latency_ms"}
            for r in doc["turn_rows"]}


def test_no_internal_error_and_gbrains_exit_code(runs: tuple[Any, dict[str, Any], Any]) -> None:
    proc, _, expected = runs
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode == expected["exit_code"], proc.stderr


def test_every_turn_row_equals_gbrains(runs: tuple[Any, dict[str, Any], Any]) -> None:
    _, ours, expected = runs
    got, want = _rows(ours), _rows(expected)
    assert sorted(got, key=str) == sorted(want, key=str)
    differing = {k: (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not differing, json.dumps({str(k): v for k, v in differing.items()}, ensure_ascii=False, indent=1)


def test_every_cell_equals_gbrains(runs: tuple[Any, dict[str, Any], Any]) -> None:
    _, ours, expected = runs
    assert {(c["harness"], c["suite"]): c for c in ours["cells"]} == \
        {(c["harness"], c["suite"]): c for c in expected["cells"]}


def test_the_same_fixtures_fail_to_seed(runs: tuple[Any, dict[str, Any], Any]) -> None:
    _, ours, expected = runs
    # Which fixtures, not the wording: our messages name our reasons, gbrain's quote js-yaml.
    assert sorted(f["fixture_id"] for f in ours["seed_failures"]) == \
        sorted(f["fixture_id"] for f in expected["seed_failures"])
