"""The containerized run grades exactly like the embedded local run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
SEAM_IMAGES = ("brainbench/openclaw:latest", "brainbench/claude-code:latest", "brainbench/codex:latest")


def _images_present() -> list[str]:
    import docker

    client = docker.from_env()
    missing = []
    for name in SEAM_IMAGES:
        try:
            client.images.get(name)
        except docker.errors.ImageNotFound:
            missing.append(name)
    return missing


def _run(tmp: Path, *args: str) -> dict[str, Any]:
    out = tmp / f"result-{'-'.join(a.strip('-') for a in args) or 'local'}.json"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=1800, check=False, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _graded(doc: dict[str, Any]) -> tuple[Any, Any]:
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"]]
    return doc["cells"], rows


def test_full_gate_run_in_docker_equals_the_embedded_run(tmp_path: Path) -> None:
    missing = _images_present()
    if missing:
        pytest.skip(f"seam images not built ({', '.join(missing)}): run scripts/build-images --offline")
    local = _run(tmp_path)
    docker_stream = _run(tmp_path, "--executor", "docker")
    assert _graded(docker_stream) == _graded(local)
    assert {s["executor"] for s in docker_stream["_meta"]["run"]["seams"]} == {"docker"}
    assert all(s["image_digest"] for s in docker_stream["_meta"]["run"]["seams"])
