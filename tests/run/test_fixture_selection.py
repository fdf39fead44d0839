"""``brainbench run --fixture``: re-run one failing fixture (or a glob) alone; a partial run is never gated."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

IDS = ("kta-001-deal-recall", "ms-002-nondefault-active", "wb-001-pricing-concern",
       "cont-001-widget-pass-writer", "cont-001-widget-pass-reader")


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("corpus"), IDS)


def _run(corpus: tuple[Path, Path], *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]),
                           "--gold", str(corpus[1]), "--harness", "openclaw", "--json", "--quiet", *args],
                          capture_output=True, text=True, timeout=600, check=False, env=env)
    return proc, (json.loads(proc.stdout) if proc.stdout.strip() else {})


def test_one_fixture_alone(corpus: tuple[Path, Path]) -> None:
    proc, doc = _run(corpus, "--fixture", "kta-001-deal-recall")
    assert proc.returncode == 0, proc.stderr
    assert {r["fixture_id"] for r in doc["turn_rows"]} == {"kta-001-deal-recall"}
    assert doc["cells"] and all(c["fixtures"] == ["kta-001-deal-recall"] for c in doc["cells"])
    assert doc["_meta"]["run"]["fixture_selection"] == ["kta-001-deal-recall"]
    assert doc["_meta"]["run"]["completed_fixtures"] == ["kta-001-deal-recall"]


def test_a_glob_and_one_half_of_a_pair_runs_the_whole_pair(corpus: tuple[Path, Path]) -> None:
    proc, doc = _run(corpus, "--fixture", "cont-*-reader", "--fixture", "ms-00?-*")
    assert proc.returncode == 0, proc.stderr
    # The reader is scored on what the writer's write-back stored: the pair runs together.
    assert doc["_meta"]["run"]["completed_fixtures"] == ["ms-002-nondefault-active", "pair:cont-001"]
    assert "continuity" in {c["suite"] for c in doc["cells"]}
    assert "kta-001-deal-recall" not in {r["fixture_id"] for r in doc["turn_rows"]}


def test_a_typo_is_an_error_with_a_suggestion(corpus: tuple[Path, Path]) -> None:
    proc, _ = _run(corpus, "--fixture", "kta-001-deal-recal")
    assert proc.returncode == 2
    assert "--fixture kta-001-deal-recal: no such fixture" in proc.stderr
    assert "did you mean kta-001-deal-recall?" in proc.stderr


def test_an_unknown_id_points_at_a_command_that_lists_the_ids(corpus: tuple[Path, Path]) -> None:
    proc, _ = _run(corpus, "--fixture", "zzz-nothing-like-it")
    assert proc.returncode == 2
    assert proc.stderr.strip().endswith("(`brainbench validate --list` lists the fixture ids)"), proc.stderr
    # ... and that command does list them, one per line, with suites and the holdout mark.
    listed = subprocess.run([sys.executable, "-m", "brainbench.cli", "validate", "--fixtures", str(corpus[0]),
                             "--gold", str(corpus[1]), "--list"], capture_output=True, text=True, timeout=120,
                            check=False)
    assert listed.returncode == 0, listed.stderr
    rows = [line.split("\t") for line in listed.stdout.splitlines()[2:]]
    assert sorted(r[0] for r in rows) == sorted(IDS)
    assert ["kta-001-deal-recall", "know-to-ask,push"] in rows


def test_the_gate_refuses_a_partial_run(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    full, _ = _run(corpus, "--update-baseline-to", str(tmp_path / "base.json"))
    assert full.returncode == 0, full.stderr
    proc, doc = _run(corpus, "--fixture", "kta-001-deal-recall", "--compare", str(tmp_path / "base.json"))
    assert proc.returncode == 2, proc.stderr
    assert ("refusing --compare on a partial run (--fixture kta-001-deal-recall): a baseline covers the whole "
            "corpus") in proc.stderr
    assert doc["cells"]  # the partial result itself is still reported
    proc, _ = _run(corpus, "--fixture", "kta-001-deal-recall", "--update-baseline-to", str(tmp_path / "p.json"))
    assert proc.returncode == 2 and "refusing --update-baseline on a partial run" in proc.stderr
    assert not (tmp_path / "p.json").exists()
