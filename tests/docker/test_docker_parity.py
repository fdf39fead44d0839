"""The containerized run grades exactly like the embedded local run."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_runs import cli_run, graded, missing_images  # type: ignore[import-not-found]

SEAM_IMAGES = ("brainbench/openclaw:latest", "brainbench/claude-code:latest", "brainbench/codex:latest")


def test_full_gate_run_in_docker_equals_the_embedded_run(tmp_path: Path) -> None:
    missing = missing_images(SEAM_IMAGES)
    if missing:
        pytest.skip(f"seam images not built ({', '.join(missing)}): run scripts/build-images --offline")
    local = cli_run(tmp_path / "local.json")
    docker_stream = cli_run(tmp_path / "docker.json", "--executor", "docker")
    assert graded(docker_stream) == graded(local)
    assert {s["executor"] for s in docker_stream["_meta"]["run"]["seams"]} == {"docker"}
    assert all(s["image_digest"] for s in docker_stream["_meta"]["run"]["seams"])
