"""Progress from the first second, through the real CLI without a terminal (as CI and compose see it):
every set-up phase named as it starts, progress counted in fixtures and hook calls, and a closing line
with the verdict, the result's path and the elapsed time.  The hook-call count is checked against the
calls themselves: ``--keep`` writes one payload file per call."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

IDS = ("kta-001-deal-recall", "ms-002-nondefault-active", "cont-001-widget-pass-writer",
       "cont-001-widget-pass-reader")
STAMP = r"\[ *[0-9]+\.[0-9] s\] "


def test_phases_units_and_the_closing_line(reference: Path, tmp_path: Path) -> None:
    fx, gd = copy_reference_corpus(reference, tmp_path, IDS)
    out = tmp_path / "out" / "result.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                           "--harness", "codex,openclaw", "--mode", "exec", "--jobs", "1", "--keep", "--out",
                           str(out)], capture_output=True, text=True, timeout=600, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    work_root = Path(doc["_meta"]["trace"]["work_root"])
    try:
        calls = len(list(work_root.rglob("*.in.json")))
    finally:
        shutil.rmtree(work_root, ignore_errors=True)
    lines = proc.stderr.strip().splitlines()
    stamped = [re.sub(STAMP, "", line) for line in lines if re.match(STAMP, line)]
    # The set-up phases, in the order a run meets them (the two seams start side by side).
    assert stamped[0] == "starting the embedded brain server (PostgreSQL, Unix socket only)"
    setup = stamped[: stamped.index("replaying 4 fixtures through codex, openclaw (1 at a time)") + 1]
    assert {"building the brain template (dead runs' databases swept, schema migrated)",
            "starting seam codex (local)", "starting seam openclaw (local)"} <= set(setup), setup
    assert any(re.fullmatch(r"seam codex up \(local, exec\) in [0-9.]+ s", line) for line in setup), setup
    # Units are fixtures (the continuity pair counts as its two) and hook calls, the last line all of them.
    progress = stamped[len(setup):]
    assert progress and all(re.fullmatch(r"replayed [1-4]/4 fixtures, [0-9,]+ hook calls", p) for p in progress)
    assert progress[-1] == f"replayed 4/4 fixtures, {calls} hook calls"
    assert re.fullmatch(rf"brainbench: clean, not gated \(no --compare\), exit 0 · result {re.escape(str(out))} · "
                        rf"[0-9.]+ s · replayed 4/4 fixtures, {calls} hook calls", lines[-1]), lines[-1]


def test_quiet_says_nothing_but_what_matters(reference: Path, tmp_path: Path) -> None:
    fx, gd = copy_reference_corpus(reference, tmp_path, IDS[:1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                           "--harness", "codex", "--quiet"], capture_output=True, text=True, timeout=600,
                          check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert not re.search(STAMP, proc.stderr) and "brainbench: clean" not in proc.stderr
