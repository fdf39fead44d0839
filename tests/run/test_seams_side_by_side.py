"""A fixture's seams replay at the same time (orchestrator/launch.py ``seams_side_by_side``): each reads
the brain through its own role and keeps its own transcript, so the run's calls fill the cores its
jobs leave idle; with an image behind a seam they keep taking turns, so that the image's own
deadline never depends on our calls beside it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from brainbench.orchestrator.launch import ActiveSeam, seams_side_by_side
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

SEAMS = ("openclaw", "claude-code", "codex")
# A hook that stays silent after a pause and writes down when it ran, for which seam.
HOOK = """
import os, sys, time
sys.stdin.buffer.read()
began = time.time()
time.sleep(0.3)
with open(os.environ["CALL_LOG"], "a") as log:
    log.write(f"{os.environ['SEAM_NAME']} {began} {time.time()}\\n")
"""


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("corpus"), ("kta-001-deal-recall",))


def test_the_seams_of_one_fixture_are_called_at_the_same_time(corpus: tuple[Path, Path], tmp_path: Path) -> None:
    hook, log = tmp_path / "hook.py", tmp_path / "calls.log"
    hook.write_text(HOOK)
    seams = "".join(f'[seams.{name}]\ncommand = ["{sys.executable}", "{hook}"]\nmode = "exec"\n'
                    f'env = {{ CALL_LOG = "{log}", SEAM_NAME = "{name}" }}\n\n' for name in SEAMS)
    (tmp_path / "seams.toml").write_text(seams)
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]),
                           "--gold", str(corpus[1]), "--seams", str(tmp_path / "seams.toml"), "--jobs", "1",
                           "--suite", "know-to-ask", "--quiet", "--out", str(tmp_path / "result.json")],
                          capture_output=True, text=True, timeout=600, check=False, env=env)
    assert proc.returncode in (0, 1), proc.stderr  # silence everywhere: graded, maybe failing its gold
    calls = [(seam, float(a), float(b)) for seam, a, b in (line.split() for line in log.read_text().splitlines())]
    assert {seam for seam, _, _ in calls} == set(SEAMS)
    # One fixture, one job: only the seams' own side-by-side replay can make two calls overlap.
    overlapping = {(s, t) for s, a, b in calls for t, c, d in calls if s < t and a < d and c < b}
    assert overlapping, calls
    doc = json.loads((tmp_path / "result.json").read_text())
    # Rows keep the seams' order, whatever order their calls finished in.
    assert list(dict.fromkeys(r["harness"] for r in doc["turn_rows"])) == list(SEAMS)
    assert doc["_meta"]["faults"] == []


def _seam(image: str | None) -> ActiveSeam:
    return ActiveSeam(spec=None, process=None, info=None, timeout_s=1.0, env={},  # type: ignore[arg-type]
                      production_image=image)


def test_an_image_behind_a_seam_keeps_the_seams_taking_turns() -> None:
    assert seams_side_by_side("local", [_seam(None)] * 3)
    assert seams_side_by_side("docker", [_seam(None)] * 2)  # our own adapters' images
    assert not seams_side_by_side("docker", [_seam(None), _seam("brainbench/gbrain:latest")])
    assert not seams_side_by_side("local", [_seam("example/memory:1")])
    assert not seams_side_by_side("sidecar", [_seam(None)])  # a sidecar's image may be anyone's
