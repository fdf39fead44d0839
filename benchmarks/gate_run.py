"""Time the full gate run: wall time, replayed turns per second, per-hook latency, peak RSS.

Usage: .venv/bin/python benchmarks/gate_run.py [--scale K] [brainbench run args...]
(e.g. --executor docker, --mode exec, --jobs 1). Runs `brainbench run` as a
subprocess on the committed corpus and reads the result file it writes.

``--scale K`` instead runs a generated seed-42 corpus with K times the default
count of every category (K=3 replays ≈ 500 user turns per seam, ≈ 1,500 calls).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


def _scaled_corpus(scale: int, root: Path) -> list[str]:
    from brainbench.generator import DEFAULT_COUNTS, generate_and_write

    fixtures, gold = root / "fixtures", root / "gold"
    fixtures.mkdir()
    gold.mkdir()
    generate_and_write(42, fixtures, gold, {k: v * scale for k, v in DEFAULT_COUNTS.items()})
    return ["--fixtures", str(fixtures), "--gold", str(gold)]


# Runs the command, then prints its wall time and the peak RSS (KiB) of the largest process
# of its tree (runner, seams, Postgres): a fresh RUSAGE_CHILDREN covers only this one run.
_TIMED = ("import resource, subprocess, sys, time\n"
          "t0 = time.perf_counter()\n"
          "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL).returncode\n"
          "print(time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
          "sys.exit(code)\n")


# What one measurement holds (the docs' tables are rendered from these; a test checks
# that benchmarks/results.json holds exactly these).
FIELDS = ("wall_s", "calls", "fixtures", "turn_rows", "turns_per_s", "p50_ms", "p95_ms", "peak_rss_mb", "cells")


def comparable(doc: dict[str, Any]) -> tuple[Any, Any]:
    """Cells and turn rows without what is measured (latency): equal across executors and modes."""
    rows = [{k: v for k, v in row.items() if k != "latency_ms"} for row in doc["turn_rows"]]
    return doc["cells"], rows


def measure(args: list[str], scale: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """(numbers, result document) of one `brainbench run` with these arguments."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        if scale != 1:
            args = [*_scaled_corpus(scale, Path(tmp)), *args]
        command = [sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--out", str(out), *args]
        proc = subprocess.run([sys.executable, "-c", _TIMED, *command], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"brainbench run {' '.join(args)} exited {proc.returncode}: {proc.stderr[-2000:]}")
        doc = json.loads(out.read_text())
    latency = {(r["fixture_id"], r["turn_id"], r["harness"]): r["latency_ms"] for r in doc["turn_rows"]}
    latencies = sorted(latency.values())
    wall_text, rss_kib = proc.stdout.split()[-2:]
    wall, rss_mb = float(wall_text), int(rss_kib) / 1024
    numbers = {
        "wall_s": round(wall, 2), "calls": len(latency), "fixtures": len({r["fixture_id"] for r in doc["turn_rows"]}),
        "turn_rows": len(doc["turn_rows"]), "turns_per_s": round(len(latency) / wall, 1),
        "p50_ms": round(latencies[len(latencies) // 2], 1), "p95_ms": round(latencies[int(0.95 * len(latencies))], 1),
        "peak_rss_mb": round(rss_mb), "cells": len(doc["cells"]),
    }
    assert tuple(numbers) == FIELDS
    return numbers, doc


def main(args: list[str]) -> None:
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__)
        return
    scale = 1
    if args[:1] == ["--scale"]:
        scale, args = int(args[1]), args[2:]
    try:
        n, _ = measure(args, scale)
    except RuntimeError as exc:
        sys.exit(str(exc))
    print(f"args: {' '.join(args) or '(defaults)'}")
    print(f"wall {n['wall_s']:.2f} s · {n['calls']} replayed (seam × user turn) calls · {n['turns_per_s']} turns/s · "
          f"peak RSS {n['peak_rss_mb']} MB · {n['cells']} cells")
    print(f"per-hook latency p50 {n['p50_ms']:.1f} ms, p95 {n['p95_ms']:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
