"""Scale on one machine: a K× generated corpus against 1×, and where the runner's time goes.

Usage: .venv/bin/python benchmarks/scale_run.py [--scale 10] [brainbench run args...]

Runs ``brainbench run`` on seed-42 generated corpora of 1× and K× the default counts (the
same generator, so the work per call is alike) and reports, for each: wall time, calls,
the runner's own peak RSS (the runner process, not its seams or Postgres), and a sampled
profile of the runner.  The ratio that matters is wall(K) / wall(1) over calls(K) /
calls(1): 1.0 is linear in the number of calls.

The profile samples every thread of the runner every 20 ms and files each sample under
the first phase found walking its stack from the innermost frame out: ``seeding`` (brain
databases: create, seed, drop), ``calls`` (executors: waiting on hook answers), ``grading``
(grading and metrics), ``write-back``, ``assemble/write`` (result, report, files),
``corpus`` (loading fixtures), else ``idle`` (a thread waiting with nothing of ours on its
stack: the event loop between steps, idle pool threads) or ``other``.  Shares are of all
non-idle thread samples, plus the event loop's (main thread's) own split, which is the
one that bounds wall time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import gate_run  # a sibling script, not a package

PHASES = ("seeding", "calls", "grading", "write-back", "assemble/write", "corpus", "imports", "other")
INTERVAL_S = 0.02

# Runs the CLI in this process with a sampler thread; at exit writes the samples and the
# process's own peak RSS to the file named by argv[1].
_SAMPLED = r'''
import atexit, collections, json, resource, sys, threading, time
out, argv = sys.argv[1], sys.argv[2:]
MARKERS = (("/brainbench/brain/", "seeding"), ("/brainbench/executors/", "calls"),
           ("/brainbench/harnesses/grading", "grading"), ("/brainbench/metrics/", "grading"),
           ("/brainbench/writeback/", "write-back"), ("/brainbench/report/", "assemble/write"),
           ("/brainbench/orchestrator/outcome.py", "assemble/write"),
           ("/brainbench/orchestrator/assemble.py", "assemble/write"),
           ("/brainbench/corpus/", "corpus"), ("<frozen importlib", "imports"))
WAITS = {"_do_waitpid", "waitpid", "select", "poll", "wait", "_wait_for_tstate_lock", "get", "acquire", "recv",
         "accept", "sleep", "readline", "read", "_worker", "worker", "run_forever", "_run_once"}
counts = {"all": collections.Counter(), "main": collections.Counter()}
main_id = threading.main_thread().ident
def phase(frame):
    innermost = frame
    while frame is not None:
        name = frame.f_code.co_filename
        for marker, label in MARKERS:
            if marker in name:
                return label
        frame = frame.f_back
    if innermost.f_code.co_name in WAITS:
        return "idle"
    return "other"
def sample():
    me = threading.get_ident()
    while True:
        time.sleep(INTERVAL)
        for ident, frame in sys._current_frames().items():
            if ident == me:
                continue
            label = phase(frame)
            counts["all"][label] += 1
            if ident == main_id:
                counts["main"][label] += 1
def dump():
    with open(out, "w") as fh:
        me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        json.dump({"counts": counts, "rss_kib": me.ru_maxrss, "cpu_s": me.ru_utime + me.ru_stime,
                   "children_cpu_s": kids.ru_utime + kids.ru_stime}, fh)
atexit.register(dump)
threading.Thread(target=sample, daemon=True).start()
sys.argv = ["brainbench", *argv]
from brainbench.cli import main
main()
'''.replace("INTERVAL", repr(INTERVAL_S))


def measure(scale: int, args: list[str]) -> dict[str, Any]:
    """Numbers of one run on a ``scale``× generated corpus, with the runner's profile."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = gate_run._scaled_corpus(scale, root)
        out, prof = root / "result.json", root / "profile.json"
        command = [sys.executable, "-c", _SAMPLED, str(prof), "run", "--quiet", "--out", str(out), *corpus, *args]
        load = os.getloadavg()[0]
        started = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
        if proc.returncode not in (0, 1):  # 1 = a regression against a baseline, never given here
            raise RuntimeError(f"brainbench run (scale {scale}) exited {proc.returncode}: {proc.stderr[-2000:]}")
        doc = json.loads(out.read_text())
        profile = json.loads(prof.read_text())
    calls = len({(r["fixture_id"], r["turn_id"], r["harness"]) for r in doc["turn_rows"]})
    return {"scale": scale, "wall_s": round(wall, 2), "calls": calls,
            "fixtures": len({r["fixture_id"] for r in doc["turn_rows"]}),
            "runner_rss_mb": round(profile["rss_kib"] / 1024), "us_per_call": round(wall / calls * 1e6),
            "runner_cpu_s": round(profile["cpu_s"], 1), "children_cpu_s": round(profile["children_cpu_s"], 1),
            "load_1m_before": round(load, 1),
            "phases": _shares(profile["counts"]["all"]), "loop": _shares(profile["counts"]["main"], keep_idle=True)}


def _shares(counts: dict[str, int], keep_idle: bool = False) -> dict[str, float]:
    busy = {k: v for k, v in counts.items() if keep_idle or k != "idle"}
    total = sum(busy.values()) or 1
    return {k: round(100 * v / total, 1) for k, v in sorted(busy.items(), key=lambda kv: -kv[1])}


def _marginal_us(a: dict[str, Any], b: dict[str, Any]) -> float:
    return (b["wall_s"] - a["wall_s"]) / (b["calls"] - a["calls"]) * 1e6


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Linearity of wall time in calls: the cost of one more call, early against late.

    A fixed start-up (server, seams, imports) makes wall/calls fall with size, so
    linearity is judged on the marginal cost per call between consecutive sizes.
    """
    base, mid, top = runs[0], runs[-2], runs[-1]
    early, late = _marginal_us(base, mid), _marginal_us(mid, top)
    return {"runs": runs, "marginal_us_early": round(early), "marginal_us_late": round(late),
            "marginal_ratio": round(late / early, 3),
            "per_call_ratio": round(top["us_per_call"] / base["us_per_call"], 3),
            "rss_ratio": round(top["runner_rss_mb"] / base["runner_rss_mb"], 2)}


def _split(shares: dict[str, float]) -> str:
    # results.json stores keys sorted: order by share here, not by insertion.
    ordered = sorted(shares.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {v:.0f} %" for k, v in ordered if v >= 1)


def table(row: dict[str, Any]) -> list[str]:
    lines = ["| corpus | fixtures | calls | wall | µs per call | runner peak RSS | CPU s: runner / its children | "
             "runner thread time (non-idle) | event loop (main thread) |", "|---|---|---|---|---|---|---|---|---|"]
    for got in row["runs"]:
        lines.append(f"| {got['scale']}× generated | {got['fixtures']} | {got['calls']} | {got['wall_s']:.1f} s | "
                     f"{got['us_per_call']} | {got['runner_rss_mb']} MB | {got['runner_cpu_s']} / "
                     f"{got['children_cpu_s']} | {_split(got['phases'])} | {_split(got['loop'])} |")
    return lines


def verdict(row: dict[str, Any]) -> str:
    runs = row["runs"]
    return (f"One more call costs {row['marginal_us_early']} µs of wall time between {runs[0]['scale']}× and "
            f"{runs[-2]['scale']}×, {row['marginal_us_late']} µs between {runs[-2]['scale']}× and "
            f"{runs[-1]['scale']}× (ratio {row['marginal_ratio']:.2f}; 1.00 = linear in calls). Wall per call at "
            f"{runs[-1]['scale']}× is {row['per_call_ratio']:.2f}× that at {runs[0]['scale']}× (start-up amortised). "
            f"Runner peak RSS at {runs[-1]['scale']}× is {row['rss_ratio']:.2f}× that at {runs[0]['scale']}×.")


def main(argv: list[str]) -> None:
    scale = 10
    if argv[:1] == ["--scale"]:
        scale, argv = int(argv[1]), argv[2:]
    scales = sorted({1, max(2, scale // 3), scale})
    try:
        row = summary([measure(k, argv) for k in scales])
    except RuntimeError as exc:
        sys.exit(str(exc))
    print("\n".join(table(row)))
    print(verdict(row))


if __name__ == "__main__":
    main(sys.argv[1:])
