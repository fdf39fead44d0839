"""The CLI other repos shell out to starts without importing the heavy machinery."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HEAVY = ("psycopg", "docker", "pydantic", "anyio", "brainbench.orchestrator", "brainbench.brain")


def test_help_does_not_import_heavy_modules() -> None:
    code = ("import sys, runpy\nsys.argv = ['brainbench', '--help']\n"
            "try:\n    runpy.run_module('brainbench.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout


def test_a_bug_exits_2_with_one_line_and_a_crash_file(tmp_path: Path) -> None:
    """Exit 1 means "regression" to callers, so an uncaught exception must not produce it."""
    code = ("import sys\nimport brainbench.cli as cli\n"
            "@cli.app.command('explode')\n"
            "def explode() -> None:\n    raise RuntimeError('kaboom')\n"
            "sys.argv = ['brainbench', 'explode']\ncli.main()\n")
    env = {**os.environ, "BRAINBENCH_CRASH_DIR": str(tmp_path)}
    env.pop("BRAINBENCH_DEBUG", None)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "internal error: RuntimeError: kaboom" in proc.stderr
    [crash] = tmp_path.glob("brainbench-crash-*.txt")
    assert str(crash) in proc.stderr
    assert "Traceback" in crash.read_text() and "kaboom" in crash.read_text()


def test_cleanup_without_an_engine_is_an_error_not_a_traceback() -> None:
    env = {**os.environ, "DOCKER_HOST": "unix:///nonexistent/docker.sock"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "cleanup"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "no docker engine reachable" in (proc.stdout + proc.stderr).lower()
    assert "Traceback" not in proc.stderr
