"""Cold start of our contract adapters: wall time of one exec-mode hook call, a fresh process each.

Seeds one brain per committed fixture (the first ``--fixtures`` of them) in an
embedded Postgres, then for each seam calls ``python -m brainbench.hooks SEAM``
once per user turn of those fixtures, a new process every time, exactly as a
harness does, and reports p50/p95 per call:

- ``python -c pass``: the interpreter's own start, the floor for any Python hook;
- ``warm server`` (the default): the thin client answered by the warm hook server;
- ``in-process`` (``BRAINBENCH_HOOK_SERVE=0``): every call imports everything itself.

It also reports what the client imports (``python -X importtime``, summed).

Usage: .venv/bin/python benchmarks/cold_start.py [--fixtures N]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SEAMS = ("openclaw", "claude-code", "codex")


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _messages(fixture: dict[str, object], seam: str) -> list[dict[str, object]]:
    turns = [t for t in fixture["turns"] if t["role"] == "user"]  # type: ignore[index, union-attr]
    out = []
    for turn in turns:
        message: dict[str, object] = {"hook_event_name": "UserPromptSubmit", "session_id": "bench", "cwd": "/tmp",
                                      "prompt": turn["text"]}
        if seam == "openclaw":
            message["messages"] = []
        out.append(message)
    return out


def _call(seam: str, message: dict[str, object], env: dict[str, str]) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "brainbench.hooks", seam], input=json.dumps(message).encode(),
                          env=env, capture_output=True, check=False)
    elapsed = (time.perf_counter() - t0) * 1000
    if proc.returncode != 0:
        sys.exit(f"{seam}: exit {proc.returncode}: {proc.stderr.decode()[-500:]}")
    return elapsed, proc.stdout.decode()


def _wait_for_server(seam: str, env: dict[str, str]) -> None:
    """Start the warm hook server (the first call of a key does) and wait until it answers."""
    import socket

    from brainbench.hooks.__main__ import socket_path

    _call(seam, {"hook_event_name": "UserPromptSubmit", "prompt": ""}, env)
    path = socket_path(env)
    if path is None:
        sys.exit("no usable socket directory for the warm hook server")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(path)
                return
            except OSError:
                time.sleep(0.05)
    sys.exit(f"the warm hook server never answered on {path}")


def _import_ms(seam: str, env: dict[str, str]) -> float:
    """Total import time of one client call, from ``-X importtime`` (top-level entries summed)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "brainbench.hooks", seam], input=b"{}",
                          env=env, capture_output=True, check=False)
    total = 0
    for line in proc.stderr.decode().splitlines():
        if line.startswith("import time:") and "|" in line and "cumulative" not in line:
            _, cumulative, name = line[len("import time:"):].split("|")
            if not name.startswith("  "):  # top level: children are counted in their parent
                total += int(cumulative)
    return total / 1000


def measure(n_fixtures: int = 20) -> dict[str, Any]:
    from brainbench.brain.databases import BrainDatabases
    from brainbench.brain.seeding import seed_fixture
    from brainbench.brain.server import EmbeddedPostgres
    from brainbench.brain.store import connect
    from brainbench.models.corpus import Fixture

    paths = sorted((REPO / "fixtures").glob("gen-*.fixture.json"))[:n_fixtures]
    fixtures = [json.loads(p.read_text()) for p in paths]
    server = EmbeddedPostgres()
    dbs = BrainDatabases(server, "bench-cold")
    results: dict[str, Any] = {"fixtures": len(fixtures)}
    try:
        dbs.prepare()
        brains = []
        for doc in fixtures:
            _, url = dbs.create()
            with connect(url) as conn:
                seed_fixture(conn, Fixture.model_validate(doc))
            brains.append((url, doc))
        base = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_")}
        floor = []
        for _ in range(20):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            floor.append((time.perf_counter() - t0) * 1000)
        results["python"] = floor
        for label, extra in (("warm", {}), ("in-process", {"BRAINBENCH_HOOK_SERVE": "0"})):
            for seam in SEAMS:
                samples: list[float] = []
                outputs: list[str] = []
                for url, doc in brains:
                    env = {**base, **extra, "BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": "default"}
                    if label == "warm":
                        _wait_for_server(seam, env)
                    for message in _messages(doc, seam):
                        ms, out = _call(seam, message, env)
                        samples.append(ms)
                        outputs.append(out)
                results[f"{label}/{seam}"] = samples
                results[f"{label}/{seam}/outputs"] = outputs
            results[f"{label}/imports_ms"] = _import_ms("openclaw", {**base, **extra})
        for seam in SEAMS:  # the two paths must answer with the same bytes
            if results[f"warm/{seam}/outputs"] != results[f"in-process/{seam}/outputs"]:
                sys.exit(f"{seam}: warm-server and in-process answers differ")
    finally:
        dbs.close()
        server.close()
    return results


def summary(results: dict[str, Any]) -> dict[str, Any]:
    """p50/p95 per configuration over all three seams' calls, plus each seam's p50."""

    def stats(samples: list[float]) -> dict[str, float]:
        return {"p50_ms": round(statistics.median(samples), 1), "p95_ms": round(_percentile(samples, 0.95), 1),
                "calls": len(samples)}

    out: dict[str, Any] = {"fixtures": results["fixtures"], "python": stats(results["python"])}
    for label in ("warm", "in-process"):
        every = [ms for seam in SEAMS for ms in results[f"{label}/{seam}"]]
        out[label] = {**stats(every), "imports_ms": round(results[f"{label}/imports_ms"], 1),
                      "seam_p50_ms": {seam: round(statistics.median(results[f"{label}/{seam}"]), 1)
                                      for seam in SEAMS}}
    return out


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--fixtures", type=int, default=20)
    args = parser.parse_args(argv)
    got = summary(measure(args.fixtures))
    print(f"{got['fixtures']} fixtures; p50 / p95 per call, over all three seams")
    print(f"python -c pass (the floor)             {got['python']['p50_ms']:7.1f} / {got['python']['p95_ms']:7.1f} ms")
    for label in ("warm", "in-process"):
        row = got[label]
        seams = ", ".join(f"{seam} {ms:.0f}" for seam, ms in row["seam_p50_ms"].items())
        print(f"{label:38s} {row['p50_ms']:7.1f} / {row['p95_ms']:7.1f} ms over {row['calls']} calls "
              f"(p50 {seams}; client imports {row['imports_ms']:.0f} ms)")


if __name__ == "__main__":
    main(sys.argv[1:])
