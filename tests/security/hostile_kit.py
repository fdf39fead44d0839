"""Shared helpers of the hostile-image cases: run the CLI, and compare honest seams with a clean run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HOSTILE = "claude-code"
HONEST = ("codex", "openclaw")


def bench(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "250", **(env or {})}, timeout=timeout, check=False)


def run_result(corpus: tuple[Path, Path], out: Path, *extra: str,
               env: dict[str, str] | None = None) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    proc = bench("run", "--fixtures", str(corpus[0]), "--gold", str(corpus[1]), "--jobs", "2", "--quiet",
                 "--json", "--out", str(out), *extra, env=env)
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert out.exists(), f"no result written (exit {proc.returncode}): {proc.stderr[-3000:]}"
    result = json.loads(out.read_text())
    assert result["_meta"]["run"]["complete"], proc.stderr[-3000:]
    return proc, result


def honest_view(result: dict[str, Any], honest: tuple[str, ...] = HONEST) -> tuple[str, str]:
    rows = [{k: v for k, v in row.items() if k != "latency_ms"}
            for row in result["turn_rows"] if row["harness"] in honest]
    cells = [cell for cell in result["cells"] if cell["harness"] in honest]
    assert rows and cells, "no honest turn was graded: a comparison of nothing proves nothing"
    return json.dumps(rows, sort_keys=True), json.dumps(cells, sort_keys=True)


def hostile_faults(result: dict[str, Any], hostile: str = HOSTILE) -> set[str]:
    """The fault classes of the run; asserts that only the hostile seam has any."""
    faults = result["_meta"]["faults"]
    assert faults, "the hostile seam's answers were graded clean"
    others = [f for f in faults if f["harness"] != hostile]
    assert not others, f"an honest seam was charged: {others[:3]}"
    return {f["fault_class"] for f in faults}
