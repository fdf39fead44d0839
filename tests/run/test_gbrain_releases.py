"""gbrain v0.46's corpus, gated with each release's behaviour, gives that release's committed numbers.

Needs GBRAIN_SRC (a gbrain checkout: its corpus cannot be in this repository): marker ``gbrain``, left
out of scripts/test's passes; ``scripts/check-gbrain PATH`` runs it, and selected without GBRAIN_SRC it
fails.  The oracles are gbrain's own output: with ``--behaviour 0.46`` the checkout's
``baselines/main.json`` (cells, counts and config), with ``--behaviour 0.60`` on gbrain 0.60's
184-fixture corpus (the checkout's 142 files plus the 42 memory-trust fixtures of
tests/data/reference-trust) all 24 cells of its ``main.json``
(tests/data/reference-trust/corpus-trust/main.json, its sum checked by
tests/corpus/test_reference_data.py: the trust labels move ``avg_injected_tokens`` in every cell, the
openclaw volunteer arm lifts its push recall to 1, and the memory-trust cells come from our
reference memory system), to the last gold count and 4-decimal value.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

GBRAIN_SRC = os.environ.get("GBRAIN_SRC", "")
REPO = Path(__file__).resolve().parents[2]
NEWER = REPO / "tests" / "data" / "reference-trust" / "corpus-trust"
CLASSIC = ("know-to-ask", "push", "write-back", "continuity")
TRUST = ("trust", "state-resolution", "poisoning", "deletion")
pytestmark = pytest.mark.gbrain


@pytest.fixture(scope="module", autouse=True)
def _gbrain_checkout() -> None:
    if not GBRAIN_SRC:
        pytest.fail("GBRAIN_SRC is not set: run scripts/check-gbrain PATH (a gbrain checkout)", pytrace=False)


def _gate_run(behaviour: str, out: Path, corpus: Path | None = None) -> dict[str, Any]:
    corpus = corpus or Path(GBRAIN_SRC) / "evals" / "brainbench"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures", corpus / "fixtures",
                           "--gold", corpus / "gold", "--behaviour", behaviour, "--out", out], capture_output=True,
                          text=True, timeout=1800, check=False, env=env, cwd=out.parent)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())  # type: ignore[no-any-return]


def _newer_corpus(root: Path) -> Path:
    """gbrain 0.60's corpus: the checkout's 142 fixtures and gold plus the 42 memory-trust ones."""
    for name in ("fixtures", "gold"):
        (root / name).mkdir(parents=True)
        for source in (Path(GBRAIN_SRC) / "evals" / "brainbench" / name, NEWER / name):
            for path in source.glob("*.json"):
                shutil.copyfile(path, root / name / path.name)
    return root


def _cells(doc: dict[str, Any]) -> dict[str, tuple[int, int, dict[str, float]]]:
    return {f"{c['harness']}/{c['suite']}": (c["gold_total"], c["gold_failed"], c["metrics"]) for c in doc["cells"]}


Cells = dict[str, tuple[int, int, dict[str, float]]]


def _expected(baseline: dict[str, Any], suites: tuple[str, ...] = CLASSIC) -> Cells:
    return {key: (baseline["counts"][key]["gold_total"], baseline["counts"][key]["gold_failed"], metrics)
            for key, metrics in baseline["cells"].items() if key.split("/", 1)[1] in suites}


def _rounded(cells: dict[str, tuple[int, int, dict[str, float]]]) -> dict[str, Any]:
    from brainbench.jsjson import round4

    return {k: (t, f, {m: round4(v) for m, v in metrics.items()}) for k, (t, f, metrics) in cells.items()}


def test_the_older_behaviour_gives_gbrain_v046s_numbers(tmp_path: Path) -> None:
    main = json.loads((Path(GBRAIN_SRC) / "evals" / "brainbench" / "baselines" / "main.json").read_text())
    doc = _gate_run("0.46", tmp_path / "result.json")
    assert doc["_meta"]["faults"] == [] and doc["seed_failures"] == []
    assert doc["receipt"]["fixtures_hash"] == main["fixtures_hash"]
    assert _rounded(_cells(doc)) == _expected(main)


def test_the_newer_behaviour_gives_all_24_cells_of_gbrain_060(tmp_path: Path) -> None:
    newer = json.loads((NEWER / "main.json").read_text())
    doc = _gate_run("0.60", tmp_path / "result.json", _newer_corpus(tmp_path / "corpus"))
    assert doc["_meta"]["faults"] == [] and doc["seed_failures"] == []
    assert doc["receipt"]["fixtures_hash"] == newer["fixtures_hash"]
    expected = _expected(newer, CLASSIC + TRUST)
    assert len(expected) == 24
    assert _rounded(_cells(doc)) == expected
