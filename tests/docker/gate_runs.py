"""Full gate runs through the real CLI, compared on what is graded (the docker parity suites)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from brainbench.gate.baseline import canonical_baseline, parse_baseline
from brainbench.models.result import RunResult

REPO = Path(__file__).resolve().parents[2]


def missing_images(names: Iterable[str]) -> list[str]:
    """Which of ``names`` the engine at DOCKER_HOST does not have."""
    import docker

    client = docker.from_env(version="auto")
    missing = []
    for name in names:
        try:
            client.images.get(name)
        except docker.errors.ImageNotFound:
            missing.append(name)
    return missing


def cli_run(out: Path, *args: str, docker_host: str | None = None) -> dict[str, Any]:
    """``brainbench run --quiet --out OUT ARGS…`` outside CI mode; the result document."""
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--out", str(out), *args],
                          capture_output=True, text=True, timeout=1800, check=False, env=env, cwd=REPO)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def graded(doc: dict[str, Any]) -> tuple[Any, Any]:
    """Cells and turn rows; only the measured latency may differ between executors."""
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"]]
    return doc["cells"], rows


def assert_other_seams_equal_the_baseline(result: RunResult, harness: str) -> None:
    """Every cell and count of the seams other than ``harness`` is the committed baseline's."""
    main = parse_baseline(REPO / "baselines" / "main.json")
    current = canonical_baseline(result, harnesses=main.config.harnesses, suites=main.config.suites)
    others = [k for k in main.cells if not k.startswith(f"{harness}/")]
    assert others
    for key in others:
        assert current.cells[key] == main.cells[key], key
        assert current.counts[key] == main.counts[key], key
