"""Time the full gate run: wall time, replayed turns per second, peak RSS.

Usage: .venv/bin/python benchmarks/gate_run.py [--scale K] [brainbench run args...]
(e.g. --executor docker, --mode exec, --jobs 1). Runs `brainbench run` as a
subprocess on the committed corpus and reads the result file it writes.

``--scale K`` instead runs a generated seed-42 corpus with K times the default
count of every category (K=3 replays ≈ 500 user turns per seam, ≈ 1,500 calls).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _scaled_corpus(scale: int, root: Path) -> list[str]:
    from brainbench.generator import DEFAULT_COUNTS, generate_and_write

    fixtures, gold = root / "fixtures", root / "gold"
    fixtures.mkdir()
    gold.mkdir()
    generate_and_write(42, fixtures, gold, {k: v * scale for k, v in DEFAULT_COUNTS.items()})
    return ["--fixtures", str(fixtures), "--gold", str(gold)]


def main(args: list[str]) -> None:
    scale = 1
    if args[:1] == ["--scale"]:
        scale, args = int(args[1]), args[2:]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        if scale != 1:
            args = [*_scaled_corpus(scale, Path(tmp)), *args]
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--out", str(out), *args],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            sys.exit(f"brainbench run exited {proc.returncode}: {proc.stderr[-2000:]}")
        doc = json.loads(out.read_text())
    calls = len({(r["fixture_id"], r["turn_id"], r["harness"]) for r in doc["turn_rows"]})
    latencies = sorted({(r["fixture_id"], r["turn_id"], r["harness"]): r["latency_ms"]
                        for r in doc["turn_rows"]}.values())
    # Peak RSS of the largest child (runner, seams): ru_maxrss is in KiB on Linux.
    rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"args: {' '.join(args) or '(defaults)'}")
    print(f"wall {wall:.2f} s · {calls} replayed (seam × user turn) calls · {calls / wall:.1f} turns/s · "
          f"peak RSS {rss_mb:.0f} MB · {len(doc['cells'])} cells")
    print(f"per-hook latency p50 {latencies[len(latencies) // 2]:.1f} ms, "
          f"p95 {latencies[int(0.95 * len(latencies))]:.1f} ms")


if __name__ == "__main__":
    main(sys.argv[1:])
