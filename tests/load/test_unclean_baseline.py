"""A run with a fault never becomes a baseline: --update-baseline writes nothing, exits 2 and says why.

(The interrupted case is checked by the soak, whose SIGINT run also passes --update-baseline.)
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from loadkit import COMMITTED, bench, cli_env, subset_corpus  # type: ignore[import-not-found]


def test_faulty_run_leaves_the_old_baseline_untouched(tmp_path: Path) -> None:
    fx, gd = subset_corpus(tmp_path, ("kta-001-deal-recall", "ms-002-nondefault-active"))
    baseline = tmp_path / "main.json"
    baseline.write_bytes(COMMITTED.read_bytes())
    crash = shlex.join([sys.executable, "-c", "import sys; sys.exit(3)"])
    proc = bench("--fixtures", fx, "--gold", gd, "--jobs", "2", "--update-baseline", baseline,
                 "--out", tmp_path / "result.json", env=cli_env(BRAINBENCH_SEAM_COMMAND_CODEX=crash), timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert baseline.read_bytes() == COMMITTED.read_bytes()
    faults = json.loads((tmp_path / "result.json").read_text())["_meta"]["run"]["fault_counts"]
    assert faults and set(faults) == {"adapter_crash"}
    refusals = [line for line in proc.stderr.splitlines() if "update-baseline" in line]
    assert refusals == [f"refusing --update-baseline: the run is not clean ({faults['adapter_crash']} "
                        f"adapter_crash); {baseline} left untouched"], proc.stderr
    assert "wrote baseline" not in proc.stderr
