"""Infrastructure errors exit 2 (never 1, which reads as a regression), with a line that says what to do.

These need no Docker engine: they are exactly what a machine without one sees.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


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



@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A directory on a 16 KiB tmpfs with 8 KiB already taken: a disk that is really full for a run."""
    if os.geteuid() != 0:
        pytest.skip("needs root to mount a tiny tmpfs (a disk that is really full)")
    full = tmp_path / "full"
    full.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(full)], check=True)
    try:
        (full / "filler").write_bytes(b"\0" * 8192)
        yield full
    finally:
        subprocess.run(["umount", str(full)], check=False)


def _small_run(pg_server: Any, out: Path) -> tuple[str, ...]:
    return ("run", "--fixture", "kta-00*", "--fixture", "ms-00*", "--fixture", "wb-00*", "--database-url",
            pg_server.admin_url, "--out", str(out), "--quiet", "--jobs", "1")


def test_a_full_disk_is_one_line_and_a_resumable_partial_result(full_disk: Path, tmp_path: Path,
                                                                pg_server: Any) -> None:
    """The runner's own temporary files (the per-turn trace spill) on a disk with no room left:
    the machine's state, not a bug in BrainBench: one line naming it, exit 2, the partial result
    written where there is room, and --resume finishes the run once there is room again."""
    out = tmp_path / "result.json"
    run = _small_run(pg_server, out)
    proc = _bench(*run, env={"TMPDIR": str(full_disk)})
    assert proc.returncode == 2, proc.stderr
    assert "this machine ran out of disk space (No space left on device)" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "bug in BrainBench" not in proc.stderr, proc.stderr
    assert f"continue with --resume {out}" in proc.stderr, proc.stderr
    resumed = _bench(*run, "--resume", str(out))
    assert resumed.returncode == 0, resumed.stderr


def test_a_result_that_does_not_fit_is_one_line(full_disk: Path, pg_server: Any) -> None:
    out = full_disk / "result.json"
    proc = _bench(*_small_run(pg_server, out))
    assert proc.returncode == 2, proc.stderr
    # The first file of the run's output that does not fit is named (the trace, written before the result).
    assert f"this machine ran out of disk space writing {full_disk}/result." in proc.stderr, proc.stderr
    assert "(No space left on device)" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr and "bug in BrainBench" not in proc.stderr, proc.stderr
