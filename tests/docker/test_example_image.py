"""The foreign-language example image (harness_images/examples/shell-recall) is graded like any third party's.

It must pass ``doctor``; a full gate run with it behind the claude-code seam labels
that seam ``production`` with the image's digest, and leaves the other seams'
numbers exactly as in the committed baseline.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from brainbench.models.result import RunResult
from gate_runs import assert_other_seams_equal_the_baseline  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_IMAGE = "brainbench/example-shell-recall:latest"
OUR_IMAGES = ("brainbench/openclaw:latest", "brainbench/codex:latest")


def _bench(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, check=False, env={**env, "COLUMNS": "250"}, cwd=REPO)


@pytest.fixture(scope="module")
def example_image(docker_client: Any) -> str:
    from docker.errors import ImageNotFound

    for ref in (EXAMPLE_IMAGE, *OUR_IMAGES):
        try:
            docker_client.images.get(ref)
        except ImageNotFound:
            pytest.skip(f"{ref} not built; run: scripts/build-images --offline")
    return EXAMPLE_IMAGE


def test_doctor_passes_the_example(example_image: str) -> None:
    proc = _bench("doctor", "--image", example_image)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "io.brainbench.modes=exec; the run uses exec" in proc.stdout
    assert "happy path (exec)" in proc.stdout
    assert "FAIL" not in proc.stdout and "WARN" not in proc.stdout, proc.stdout
    assert "(stream)" not in proc.stdout  # never checked in a mode the run won't use


def test_full_gate_run_with_the_example_behind_claude_code(example_image: str, docker_client: Any,
                                                           tmp_path: Path) -> None:
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.claude-code]\nimage = "{example_image}"\nmode = "exec"\n')
    out = tmp_path / "result.json"
    proc = _bench("run", "--executor", "docker", "--seams", str(seams), "--out", str(out), "--quiet",
                  "--ledger", str(tmp_path / "ledger.jsonl"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = RunResult.model_validate_json(out.read_text())
    assert result.meta.faults == []

    seams_info = {s.harness: s for s in result.meta.run.seams}  # type: ignore[union-attr]
    ours = seams_info["claude-code"]
    assert (ours.seam, ours.image, ours.mode, ours.executor) == ("production", example_image, "exec", "docker")
    assert ours.image_digest == docker_client.images.get(example_image).id
    assert {c.seam for c in result.cells if c.harness == "claude-code"} == {"production"}
    # Its own policy really recalls pages (graded from the wire, like any hook).
    rows = [r for r in result.turn_rows if r.harness == "claude-code"]
    assert rows and sum(1 for r in rows if r.injected_slugs) > len(rows) // 10

    assert_other_seams_equal_the_baseline(result, "claude-code")
    assert json.loads(out.read_text())["_meta"]["run"]["executor"] == "docker"


def test_more_jobs_than_the_images_cpus_is_noted_before_the_run(example_image: str, tmp_path: Path) -> None:
    from brainbench.brain.budget import cores

    jobs = cores() + 1
    out = tmp_path / "result.json"
    proc = _bench("run", "--executor", "docker", "--image", f"claude-code={example_image}", "--harness", "claude-code",
                  "--fixture", "kta-001-deal-recall", "--jobs", str(jobs), "--quiet", "--out", str(out),
                  "--ledger", str(tmp_path / "ledger.jsonl"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    notes = [line for line in proc.stderr.splitlines() if line.startswith(f"note: --jobs {jobs} ")]
    assert notes == [f"note: --jobs {jobs} with an image behind seam(s) claude-code ({example_image}): each gets at "
                     f"most {cores()} hook call(s) at once (its container's CPUs, on {cores()} core(s)), so that a "
                     "deadline an image keeps of its own does not depend on --jobs; the fixtures' other work still "
                     "overlaps (docs/GBRAIN.md)"], proc.stderr[-3000:]
    assert out.is_file()
