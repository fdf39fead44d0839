"""What the per-turn evidence costs on the full gate run: diagnosis, trace file, HTML report.

Usage: .venv/bin/python benchmarks/trace_overhead.py [ROUNDS]

Runs the committed corpus in-process ROUNDS times with the reference diagnosis
and ROUNDS times with it replaced by a pass-through (wire evidence only),
alternating so machine load hits both alike; it also sums the time spent inside
the diagnosis itself, and times writing the trace file and the HTML report.
Prints the markdown table of docs/REPORT.md; benchmarks/update_docs.py writes it there.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def measure(rounds: int = 3) -> dict[str, Any]:
    from brainbench.corpus.loader import load_corpus
    from brainbench.diagnosis import reference as diagnose
    from brainbench.models.config import RunConfig
    from brainbench.pipeline import run_benchmark
    from brainbench.report.html import write_report
    from brainbench.report.trace_file import write_trace

    corpus = load_corpus(REPO / "fixtures", REPO / "gold")
    config = RunConfig(fixtures_dir=REPO / "fixtures", gold_dir=REPO / "gold")
    real = diagnose.diagnose_replay
    inside: list[float] = []

    def timed(*args, **kwargs):  # type: ignore[no-untyped-def]
        t0 = time.perf_counter()
        try:
            return real(*args, **kwargs)
        finally:
            inside.append(time.perf_counter() - t0)

    def passthrough(conn, item, traces, contexts, slug_sources, *_behaviour):  # type: ignore[no-untyped-def]
        return list(traces)

    walls: dict[str, list[float]] = {"with diagnosis": [], "wire evidence only": []}
    diag_totals: list[float] = []
    result = None
    for _ in range(rounds):
        for label, fn in (("with diagnosis", timed), ("wire evidence only", passthrough)):
            diagnose.diagnose_replay = fn  # type: ignore[assignment]
            inside.clear()
            t0 = time.perf_counter()
            out = run_benchmark(config, corpus)
            walls[label].append(time.perf_counter() - t0)
            if label == "with diagnosis":
                diag_totals.append(sum(inside))
                result = out
    diagnose.diagnose_replay = real
    assert result is not None
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        write_trace(Path(tmp) / "result.json", result)
        trace_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        page = write_report(Path(tmp) / "html", result)
        html_s = time.perf_counter() - t0
        size = page.stat().st_size
    diagnosed = sum(1 for t in result.trace if t.reference is not None)
    # The run chooses --jobs itself unless told (brain/budget.py): report what it chose.
    jobs = result.meta.run.jobs if result.meta.run is not None else config.jobs
    return {"rounds": rounds, "jobs": jobs,
            "walls_s": {label: round(statistics.median(values), 2) for label, values in walls.items()},
            "diagnosis_ms": round(statistics.median(diag_totals) * 1000), "traced": len(result.trace),
            "diagnosed": diagnosed, "trace_file_ms": round(trace_s * 1000), "html_ms": round(html_s * 1000),
            "html_kib": round(size / 1024)}


def table(got: dict[str, Any]) -> list[str]:
    lines = [f"| measure (median of {got['rounds']}, jobs {got['jobs']}) | value |", "|---|---|"]
    for label in ("with diagnosis", "wire evidence only"):
        lines.append(f"| full gate run, {label} | {got['walls_s'][label]:.2f} s |")
    lines.append(f"| time inside the diagnosis (summed over fixtures) | {got['diagnosis_ms']} ms |")
    lines.append(f"| turns traced / diagnosed with the reference | {got['traced']} / {got['diagnosed']} |")
    lines.append(f"| write the trace file | {got['trace_file_ms']} ms |")
    lines.append(f"| write the HTML report | {got['html_ms']} ms ({got['html_kib']} KiB) |")
    return lines


def main(rounds: int) -> None:
    print("\n".join(table(measure(rounds))))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 3)
