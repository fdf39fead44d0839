"""The CLI other repos shell out to starts without importing the heavy machinery."""

from __future__ import annotations

import subprocess
import sys

HEAVY = ("psycopg", "docker", "pydantic", "anyio", "brainbench.orchestrator", "brainbench.brain")


def test_help_does_not_import_heavy_modules() -> None:
    code = ("import sys, runpy\nsys.argv = ['brainbench', '--help']\n"
            "try:\n    runpy.run_module('brainbench.cli', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m.startswith({HEAVY!r})))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert proc.stdout.strip().splitlines()[-1] == "[]", proc.stdout
