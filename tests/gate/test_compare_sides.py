"""``run --compare BASE CURRENT`` names the file at fault, and takes a run result for either side."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def _bench(*args: str | Path, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def run_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("sides")
    result, baseline = tmp / "result.json", tmp / "baseline.json"
    proc = _bench("run", "--harness", "codex", "--suite", "know-to-ask", "--quiet", "--out", result,
                  "--update-baseline-to", baseline)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return result, baseline


def test_a_result_where_a_baseline_belongs_is_compared(run_files: tuple[Path, Path]) -> None:
    result, baseline = run_files
    for base, current in ((baseline, result), (result, baseline)):
        proc = _bench("run", "--compare", base, current)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["verdict"] == "pass"


def test_a_worse_result_is_a_regression(run_files: tuple[Path, Path], tmp_path: Path) -> None:
    result, baseline = run_files
    doc = json.loads(result.read_text())
    doc["cells"][0]["gold_failed"] += 1
    worse = tmp_path / "worse.json"
    worse.write_text(json.dumps(doc))
    proc = _bench("run", "--compare", baseline, worse)
    assert proc.returncode == 1, proc.stderr
    assert json.loads(proc.stdout)["breaches"]


def test_the_file_at_fault_is_named_with_its_place(run_files: tuple[Path, Path], tmp_path: Path) -> None:
    _, baseline = run_files
    schema = tmp_path / "some.json"
    schema.write_text('{"title": "not a baseline"}')
    proc = _bench("run", "--compare", baseline, schema)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"compare failed: --compare CURRENT {schema}: not a baseline: "
                                   "schema_version must be 1 (got null)")
    proc = _bench("run", "--compare", tmp_path / "absent.json", baseline)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"compare failed: --compare BASE {tmp_path / 'absent.json'}: file not found"


def test_a_partial_result_is_refused(run_files: tuple[Path, Path], tmp_path: Path) -> None:
    result, baseline = run_files
    doc = json.loads(result.read_text())
    doc["_meta"]["run"]["fixture_selection"] = ["kta-001-deal-recall"]
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps(doc))
    proc = _bench("run", "--compare", baseline, partial)
    assert proc.returncode == 2
    assert f"--compare CURRENT {partial}: a run result that covers only --fixture kta-001-deal-recall" in proc.stderr
