"""What the suite leaves out, and how it says so: the gbrain check needs a gbrain checkout.

gbrain's source is not ours to commit, so tests/docker/test_gbrain_image.py (marker ``gbrain``)
is in none of scripts/test's passes nor in a plain ``pytest``; scripts/check-gbrain runs it, and
without a checkout (or without an engine) it fails rather than skips.  Here, like every test in
tests/docker, skipped with the reason when no engine answers: that is what the check needs first.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MODULE = "tests/docker/test_gbrain_image.py"


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "GBRAIN_SRC"}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def test_a_plain_pytest_leaves_the_gbrain_check_out() -> None:
    chosen = _pytest("--collect-only", "-q", "-m", "gbrain", MODULE)
    checks = chosen.stdout.count(f"{MODULE}::test_")
    assert checks >= 3, chosen.stdout  # the reference turns through both hook entries, and the run
    proc = _pytest("--collect-only", "-q", MODULE)
    assert f"{checks} deselected" in proc.stdout, proc.stdout + proc.stderr
    assert "::test_" not in proc.stdout


def test_the_gbrain_check_fails_without_a_checkout(tmp_path: Path) -> None:
    proc = _pytest("-q", "-m", "gbrain", MODULE)
    assert proc.returncode == 1, proc.stdout
    assert "GBRAIN_SRC is not set: run scripts/check-gbrain" in proc.stdout
    assert " skipped" not in proc.stdout
    for args in ([], [str(tmp_path)]):  # no argument; a directory that is not a gbrain checkout
        usage = _check_gbrain(*args)
        assert usage.returncode == 2 and "usage: scripts/check-gbrain GBRAIN_SRC" in usage.stderr, usage.stderr


def test_the_gbrain_check_fails_without_an_engine(tmp_path: Path) -> None:
    (tmp_path / "package.json").write_text('{"name": "gbrain"}')
    proc = _check_gbrain(str(tmp_path), env={**os.environ, "DOCKER_HOST": f"unix://{tmp_path}/none.sock"})
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.startswith("check-gbrain: no Docker engine answers"), proc.stderr


def _check_gbrain(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(REPO / "scripts" / "check-gbrain"), *args], capture_output=True, text=True,
                          timeout=120, check=False, env=env, stdin=subprocess.DEVNULL)
