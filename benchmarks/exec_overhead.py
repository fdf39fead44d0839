"""What the runner adds to one exec-mode call in Docker: the call server's round trip.

Starts one hardened seam container in exec mode through the real Docker executor, with a
hook that does nothing (``/bin/true``: a fork and an exec), and times calls from the
runner's side.  The hook's own run is a fraction of a millisecond, so the p50 is an upper
bound of the runner overhead per exec call (target ≤ 10 ms, issue "Executor v2").  Both call
server variants are measured: the image's Python one and the static one (images without
Python).  Usage: .venv/bin/python benchmarks/exec_overhead.py [N]
"""

from __future__ import annotations

import statistics
import sys
import time
import uuid

import anyio
from brainbench.executors.base import HookCall, RunContext, SeamLaunch
from brainbench.executors.docker import DockerConfig, DockerExecutor

IMAGE = "brainbench/codex:latest"


async def _measure(variant: str, n: int) -> dict[str, float]:
    run_id = f"bbbench-overhead-{uuid.uuid4().hex[:8]}"
    executor = DockerExecutor(DockerConfig(call_server=variant), run_id=run_id, pool_size=1)  # type: ignore[arg-type]
    await executor.prepare(RunContext(run_id=run_id, pool_size=1))
    try:
        process = await executor.start(SeamLaunch(seam="codex", command=("/bin/true",), mode="exec", image=IMAGE,
                                                  run_id=run_id))
        assert getattr(process, "server_variant", None) == variant and process.server is not None  # type: ignore[attr-defined]
        call = HookCall(b"{}", {}, 10)
        await process.call(call)  # warm-up
        samples = []
        for _ in range(n):
            t0 = time.perf_counter()
            answer = await process.call(call)
            samples.append((time.perf_counter() - t0) * 1000)
            assert answer.exit_code == 0 and answer.infra_error is None, answer
        await process.stop()
    finally:
        await executor.close(False)
    samples.sort()
    return {"p50_ms": round(statistics.median(samples), 2), "p95_ms": round(samples[int(0.95 * len(samples))], 2),
            "calls": n}


def measure(n: int = 300) -> dict[str, dict[str, float]]:
    """Per call server variant: p50/p95 of a do-nothing exec-mode call, seen from the runner."""
    return {variant: anyio.run(_measure, variant, n) for variant in ("python", "static")}


def main(n: int) -> None:
    for variant, got in measure(n).items():
        print(f"{variant:7s} call server, /bin/true hook: p50 {got['p50_ms']:.2f} ms, p95 {got['p95_ms']:.2f} ms "
              f"over {n} calls")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 300)
