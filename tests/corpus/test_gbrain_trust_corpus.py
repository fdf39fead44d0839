"""gbrain 0.60's whole 184-fixture corpus loads, validates and hashes as gbrain's own baseline says.

That corpus is gbrain v0.46's 142 files (``evals/brainbench/{fixtures,gold}`` of a gbrain checkout,
which cannot be in this repository) plus the 42 memory-trust fixtures with gold in
tests/data/reference-trust.  Marker ``gbrain``: left out of scripts/test's passes and a plain
``pytest``; ``scripts/check-gbrain GBRAIN_SRC`` runs it, and without GBRAIN_SRC it fails.
The expected hash is gbrain's (its committed ``baselines/main.json``), never our own output.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

GBRAIN_SRC = os.environ.get("GBRAIN_SRC", "")
TRUST = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust"
pytestmark = pytest.mark.gbrain


def _corpus(root: Path) -> tuple[Path, Path]:
    if not GBRAIN_SRC:
        pytest.fail("GBRAIN_SRC is not set: run scripts/check-gbrain PATH (a gbrain checkout)", pytrace=False)
    theirs = Path(GBRAIN_SRC) / "evals" / "brainbench"
    fixtures, gold = root / "fixtures", root / "gold"
    for name, suffix in (("fixtures", ".fixture.json"), ("gold", ".gold.json")):
        target = root / name
        target.mkdir()
        for source in (theirs / name, TRUST / name):
            for path in source.iterdir():
                if path.name.endswith(suffix):
                    shutil.copyfile(path, target / path.name)
    return fixtures, gold


def test_the_184_fixture_corpus_validates_with_gbrains_hash(tmp_path: Path) -> None:
    fixtures, gold = _corpus(tmp_path)
    assert len(list(fixtures.iterdir())) == len(list(gold.iterdir())) == 184
    expected = json.loads((TRUST / "main.json").read_text())["fixtures_hash"]
    assert expected == "57e72893e5e24283cf19f43c087f8fa459f60be6361d885b9bc75526918a5737"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_")}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "validate", "--fixtures", str(fixtures),
                           "--gold", str(gold), "--project", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    # gbrain's ledger: 177 generated + 7 hand-authored fixtures, 29 held out.
    assert proc.stdout.splitlines() == ["ok: 184 fixtures (29 holdout), 16 continuity pairs",
                                        f"fixtures_hash {expected}"]
