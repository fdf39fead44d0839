"""``brainbench run --behaviour``: it reaches every seam, the result and the baseline record it,
and the gate never compares one release's numbers with the other's (real CLI, real seams)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
IDS = ("kta-001-deal-recall", "ms-001-two-source-alias")
LABEL = "[unverified origin · legacy]"


def bench(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=600, check=False, cwd=cwd, env=env)


@pytest.fixture
def project(reference: Path, tmp_path: Path) -> Path:
    """gbrain's seeded pages in a project of their own (no committed baseline: the newest is the default)."""
    root = tmp_path / "project"
    for kind, suffix in (("fixtures", "fixture"), ("gold", "gold")):
        (root / kind).mkdir(parents=True)
        for fid in IDS:
            shutil.copy(reference / "corpus" / kind / f"{fid}.{suffix}.json", root / kind)
    return root


def _contexts(out: Path) -> list[str]:
    rows = [json.loads(line) for line in out.with_name(out.stem + ".trace.jsonl").read_text().splitlines()]
    return [r["context"] for r in rows if r["context"]]


def test_the_choice_reaches_every_seam_and_binds_the_gate(project: Path, tmp_path: Path) -> None:
    base = tmp_path / "main-0.46.json"
    older = bench("run", "--quiet", "--behaviour", "0.46", "--update-baseline", base, "--out", tmp_path / "a.json",
                  cwd=project)
    assert older.returncode == 0, older.stderr
    assert json.loads(base.read_text())["config"]["behaviour"] == "0.46"
    doc = json.loads((tmp_path / "a.json").read_text())
    assert doc["_meta"]["run"]["behaviour"] == "0.46"
    assert _contexts(tmp_path / "a.json") and not any(LABEL in c for c in _contexts(tmp_path / "a.json"))

    newer = bench("run", "--quiet", "--format", "markdown", "--out", tmp_path / "b.json", "--compare", base,
                  cwd=project)
    assert newer.returncode == 2, newer.stderr
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["_meta"]["run"]["behaviour"] == "0.60"
    assert doc["_meta"]["compare"]["verdict"] == "inconclusive"
    assert ("behaviour mismatch: main's baseline was made with gbrain 0.46's behaviour, this run followed gbrain "
            "0.60's") in newer.stdout
    # Every seam got it: each one's injected text carries the labels now.
    labeled = {json.loads(line)["harness"] for line in (tmp_path / "b.trace.jsonl").read_text().splitlines()
               if LABEL in (json.loads(line)["context"] or "")}
    assert labeled == {"openclaw", "claude-code", "codex"}
    ledger = [json.loads(line) for line in (project / ".brainbench" / "brainbench-ledger.jsonl").read_text()
              .splitlines()]
    assert [line["config"]["behaviour"] for line in ledger] == ["0.46", "0.60"]

    same = bench("run", "--quiet", "--behaviour", "0.46", "--compare", base, cwd=project)
    assert same.returncode == 0, same.stderr + same.stdout


def test_a_committed_baseline_of_the_older_release_sets_the_default_and_says_so(project: Path) -> None:
    made = bench("run", "--quiet", "--behaviour", "0.46", "--update-baseline", cwd=project)
    assert made.returncode == 0, made.stderr
    committed = project / "baselines" / "main.json"
    again = bench("run", "--quiet", "--compare", committed, cwd=project)
    assert again.returncode == 0, again.stderr + again.stdout
    assert f"behaviour: gbrain 0.46's, as {committed} records" in again.stderr


def test_an_unknown_release_is_one_line_naming_the_flag(project: Path) -> None:
    proc = bench("run", "--behaviour", "0.5", cwd=project)
    assert proc.returncode == 2
    [line] = proc.stderr.strip().splitlines()
    assert line.startswith("brainbench run: --behaviour") and "'0.60' or '0.46'" in line
