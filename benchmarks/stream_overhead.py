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


async def _measure(n: int) -> dict[str, dict[str, float]]:
    executor = LocalExecutor(pool_size=1)
    out: dict[str, dict[str, float]] = {}
    for harness, spec in SEAMS.items():
        if harness == "claude-code":
            continue  # reads a transcript file per call: measured by the gate run instead
        process = await executor.start(SeamLaunch(seam=harness, command=spec.command(True), mode="stream"))
        message = {"hook_event_name": "UserPromptSubmit", "session_id": "b", "cwd": "/tmp",
                   "prompt": "ok, thanks!", "messages": []}
        call = HookCall(json.dumps(message).encode(), {"BRAINBENCH_DATABASE_URL": "postgresql:///unused"}, 10)
        await process.call(call)  # warm-up: process start and imports
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            answer = await process.call(call)
            samples.append((time.perf_counter() - t0) * 1000)
            assert answer.exit_code == 0 and not answer.stdout
        await process.stop()
        samples.sort()
        out[harness] = {"p50_ms": round(statistics.median(samples), 2),
                        "p95_ms": round(samples[int(0.95 * len(samples))], 2), "calls": n}
    return out


def measure(n: int = 500) -> dict[str, dict[str, float]]:
    """Per seam: p50/p95 round trip of a call that never touches the brain."""
    return anyio.run(_measure, n)


def main(n: int) -> None:
    for harness, got in measure(n).items():
        print(f"{harness:12s} stream round-trip: p50 {got['p50_ms']:.2f} ms, p95 {got['p95_ms']:.2f} ms "
              f"over {n} calls")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
