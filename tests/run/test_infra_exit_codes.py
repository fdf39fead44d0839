"""Infrastructure errors exit 2 (never 1, which reads as a regression), with a line that says what to do.

These need no Docker engine: they are exactly what a machine without one sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def _bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *args], capture_output=True, text=True,
                          timeout=120, check=False, env={**os.environ, **(env or {})})


def test_doctor_without_an_engine_could_not_check(tmp_path: Path) -> None:
    proc = _bench("doctor", "--image", "myorg/hook:1.2", env={"DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "brainbench doctor: could not check myorg/hook:1.2: no Docker engine reachable" in proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr


def test_images_build_refuses_an_unknown_name() -> None:
    proc = _bench("images", "build", "--only", "claude-cod")
    assert proc.returncode == 2
    assert "build-images: unknown image 'claude-cod' (known: postgres,openclaw,claude-code" in proc.stderr
