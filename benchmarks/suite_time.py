"""How long the whole test suite takes here: ``scripts/test`` run exactly as CI runs it.

    .venv/bin/python benchmarks/suite_time.py        # ≈ 10 min on this 2-core machine

Runs ``bash scripts/test -q`` (what ``.ci/run`` ends with) and records each pass's wall time,
as the script itself reports it (``BRAINBENCH_TEST_TIMES``), and the tests each pass ran.
``benchmarks/update_docs.py --only suite`` stores the result and rewrites docs/TESTING.md's suite
line from it, so that line is a measurement, not a number typed by hand.  Needs what CI
needs for zero skips: a Docker engine (``scripts/start-dockerd``) and the offline images.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
PASSES = ("parallel", "serial", "alone")
# pytest's last line, e.g. "1359 passed, 2 skipped, 111 deselected in 395.27s (0:06:35)".
_SUMMARY = re.compile(r"^=*\s*(?P<counts>(?:\d+ \w+(?:, )?)+) in [\d.]+s")
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|errors?|xfailed|xpassed)")


def counts(output: str) -> dict[str, int]:
    """passed/failed/skipped/errors summed over the passes' summary lines."""
    total = {"passed": 0, "failed": 0, "skipped": 0, "errors": 0}
    for line in output.splitlines():
        match = _SUMMARY.match(line.strip())
        if match is None:
            continue
        for number, kind in _COUNT.findall(match.group("counts")):
            key = "errors" if kind.startswith("error") else kind
            if key in total:
                total[key] += int(number)
    return total


def measure() -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as record:
        times = Path(record.name)
    env = {**os.environ, "BRAINBENCH_TEST_TIMES": str(times)}
    lines: list[str] = []
    try:
        proc = subprocess.Popen(["bash", "scripts/test", "-q"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        assert proc.stdout is not None
        for line in proc.stdout:  # shown as it comes: ten quiet minutes look like a hang
            sys.stdout.write(line)
            lines.append(line)
        code = proc.wait()
        passes = {row["pass"]: row for row in map(json.loads, times.read_text().splitlines())}
    finally:
        times.unlink(missing_ok=True)
    missing = [name for name in PASSES if name not in passes]
    if missing:
        raise RuntimeError(f"scripts/test exited {code} before its {', '.join(missing)} pass")
    return {"passes": {name: passes[name]["seconds"] for name in PASSES},
            "total_s": round(sum(passes[name]["seconds"] for name in PASSES), 1),
            **counts("".join(lines)), "exit": code}


def line(row: dict[str, Any]) -> str:
    """docs/TESTING.md's sentence for a measurement."""
    tests = row["passed"] + row["failed"] + row["skipped"]
    outcome = f"{row['passed']:,} passed, {row['skipped']} skipped"
    if row["failed"] or row["errors"] or row["exit"] != 0:
        outcome += f", **{row['failed']} failed, {row['errors']} errors (exit {row['exit']})**"
    passes = ", ".join(f"{name} {row['passes'][name] / 60:.1f} min" for name in PASSES)
    return (f"{tests:,} tests ({outcome}) in **{row['total_s'] / 60:.1f} min** of passes ({passes})")


def main() -> int:
    row = measure()
    print(f"\nsuite_time: {line(row)}")
    return 0 if row["exit"] == 0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
