"""scripts/pick-python: the interpreter scripts/bootstrap makes .venv with."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "pick-python"


def _pick(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT)], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_python_set_is_taken_as_is_without_probing() -> None:
    proc = _pick({**os.environ, "PYTHON": "/opt/some/python3.12"})
    assert proc.returncode == 0
    assert proc.stdout == "/opt/some/python3.12\n"
    assert proc.stderr == ""


def test_the_fastest_usable_python_is_picked_and_an_unusable_one_skipped(tmp_path: Path) -> None:
    this = Path(os.path.realpath(sys.executable))
    (tmp_path / "python3").symlink_to(this)
    too_old = tmp_path / "python3.10"  # answers nothing a >= 3.11 probe asks: skipped, not an error
    too_old.write_text("#!/bin/sh\nexit 1\n")
    too_old.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    env["PATH"] = f"{tmp_path}:/usr/bin:/bin"
    proc = _pick(env)
    assert proc.returncode == 0, proc.stderr
    probed = {m.group(1): float(m.group(2))
              for m in re.finditer(r"^pick-python: (\S+) \(3\.\d+\.\d+\) probe ([0-9.]+) s$", proc.stderr, re.M)}
    assert str(this) in probed, proc.stderr  # reached through PATH, named by its real path
    assert not any("3.10" in path for path in probed)
    picked = proc.stdout.strip()
    assert picked == min(probed, key=probed.__getitem__)
    version = subprocess.run([picked, "-c", "import sys; print(sys.version_info >= (3, 11))"],
                             capture_output=True, text=True, check=True).stdout
    assert version.strip() == "True"
