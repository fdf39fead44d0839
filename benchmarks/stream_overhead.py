"""Per-turn overhead of a seam in stream mode, excluding SQL.

Sends prompts with no name-like words (the reflex returns before touching the
brain) through the real executor and a warm seam process, and reports the
round-trip per call.  Usage: .venv/bin/python benchmarks/stream_overhead.py [N]
"""

from __future__ import annotations

import json
import statistics
import sys
import time

import anyio
from brainbench.executors.base import HookCall, SeamLaunch
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.registry import SEAMS


async def main(n: int) -> None:
    executor = LocalExecutor(pool_size=1)
    for harness, spec in SEAMS.items():
        if harness == "claude-code":
            continue  # reads a transcript file per call: measured separately below via the runner
        process = await executor.start(SeamLaunch(seam=harness, command=spec.command(True), mode="stream"))
        message = {"hook_event_name": "UserPromptSubmit", "session_id": "b", "cwd": "/tmp",
                   "prompt": "ok, thanks!", "messages": []}
        call = HookCall(json.dumps(message).encode(), {"BRAINBENCH_DATABASE_URL": "postgresql:///unused"}, 10)
        await process.call(call)  # warm-up: process start and imports
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            out = await process.call(call)
            samples.append((time.perf_counter() - t0) * 1000)
            assert out.exit_code == 0 and not out.stdout
        await process.stop()
        samples.sort()
        print(f"{harness:12s} stream round-trip: p50 {statistics.median(samples):.2f} ms, "
              f"p95 {samples[int(0.95 * len(samples))]:.2f} ms over {n} calls")


if __name__ == "__main__":
    anyio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 500)
