"""gbrain's real Claude Code hook image on the full committed corpus: wall time and where it goes.

Usage: .venv/bin/python benchmarks/gbrain_image.py [--image IMAGE] [--keep-result FILE] [--no-warm-up]
                                                   [--scale K] [brainbench run args...]

Runs ``brainbench run --executor docker --image claude-code=IMAGE --harness claude-code`` on the
committed corpus (the image is ``brainbench/gbrain:latest``, built by ``scripts/build-gbrain
GBRAIN_SRC``; a gbrain checkout is needed to build it, not to run this) and reads the run's own
phase breakdown (``_meta.phases``): template and ``init``, a clone and a ``seed`` per fixture,
the brain's start (the warm-up call: ``gbrain serve``), the graded hook calls (p50, p95, and how
many ran over gbrain's 800 ms deadline) and teardown.  Phases of concurrent fixtures overlap, so
shares are of the summed phase time, not of the wall time.

``--scale K`` instead runs the image on a seed-42 generated corpus at 1× and at K× the default
category counts (as ``benchmarks/scale_run.py`` does for our own seams): wall time per graded turn
and per phase at both sizes, so that a real memory system's run is seen to grow linearly with
its corpus (``scaling()``, ``scaling_line()``).

Without a Docker engine or without the image it measures nothing and says why
(``unavailable()``); ``update_docs.py --only gbrain-image`` then keeps an earlier row or writes
the reason into the table.
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

import gate_run  # sibling scripts, not a package
import one_row
from engine import docker_client

IMAGE = "brainbench/gbrain:latest"
PRIVATE_BRAIN_IMAGE = "brainbench/postgres-vector:latest"
REPO = Path(__file__).resolve().parents[1]
# What measure() records (results.json adds update_docs' stamp: measured_on, load_1m, cores).
FIELDS = ("image", "exit", "wall_s", "jobs", "warm_up", "fixtures", "turns", "seed_failures", "faults",
          "load_1m_before", "phases", "cpus", "shares")


def unavailable(image: str = IMAGE) -> str | None:
    """Why the image cannot be measured here, or None."""
    client, why = docker_client()
    if client is None:
        return why
    import docker

    try:
        for ref, how in ((image, "scripts/build-gbrain GBRAIN_SRC (needs a gbrain checkout)"),
                         (os.environ.get("BRAINBENCH_PRIVATE_BRAIN_IMAGE", PRIVATE_BRAIN_IMAGE),
                          "scripts/build-images --offline --only postgres-vector")):
            try:
                client.images.get(ref)
            except docker.errors.ImageNotFound:
                return f"image {ref} is not on the engine (build it: {how})"
    finally:
        client.close()
    return None


def measure(args: list[str], image: str = IMAGE, warm_up: bool = True, keep: Path | None = None,
            scale: int | None = None) -> dict[str, Any]:
    """One run of the image on the committed corpus (or, with ``scale``, a generated one that size):
    wall time, phases, and what the run graded; ``keep``: also copy the run's result there (to
    compare turn rows between runs)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        if scale is not None:
            args = [*gate_run._scaled_corpus(scale, Path(tmp)), *args]
        command = [sys.executable, "-m", "brainbench.cli", "run", "--executor", "docker",
                   "--image", f"claude-code={image}", "--harness", "claude-code", "--quiet",
                   "--out", str(out), "--ledger", str(Path(tmp) / "ledger.jsonl"), *args]
        env = {**os.environ, "BRAINBENCH_IMAGE_WARM_UP": "1" if warm_up else "0"}
        load = os.getloadavg()[0]
        started = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO, env=env)
        wall = time.perf_counter() - started
        if not out.is_file():
            raise RuntimeError(f"brainbench run exited {proc.returncode} without a result: {proc.stderr[-2000:]}")
        doc = json.loads(out.read_text())
        if keep is not None:
            keep.write_text(out.read_text())
    meta = doc["_meta"]
    phases = meta.get("phases") or {}
    seam = next((s for s in phases.get("seams", []) if s["harness"] == "claude-code"), None)
    if seam is None:
        raise RuntimeError("the result records no phases for claude-code (_meta.phases)")
    from brainbench.models.phases import RunPhases

    shares = RunPhases.model_validate(phases).shares()
    return {"image": image, "exit": proc.returncode, "wall_s": round(wall, 1), "jobs": phases.get("jobs"),
            "warm_up": warm_up, "fixtures": len({r["fixture_id"] for r in doc["turn_rows"]}),
            "turns": len({(r["fixture_id"], r["turn_id"]) for r in doc["turn_rows"]}),
            "seed_failures": len(doc["seed_failures"]), "faults": len(meta.get("faults", [])),
            "load_1m_before": round(load, 1), "phases": seam,
            "cpus": next((s.get("cpus") for s in meta["run"]["seams"] if s["harness"] == "claude-code"), None),
            "shares": {k: round(100 * v, 1) for k, v in shares.items()}}


def line(row: dict[str, Any]) -> str:
    """The README's result cell."""
    p = row["phases"]
    calls = p["hook_calls"]

    def part(name: str) -> str:
        got = p.get(name) or {"total_s": 0.0, "count": 0}
        return f"{got['total_s']:.0f} s/{got['count']}"

    share = ", ".join(f"{k.replace('_', ' ')} {v:.0f} %" for k, v in
                      sorted(row["shares"].items(), key=lambda kv: (-kv[1], kv[0])) if v >= 1)
    return (f"**{row['wall_s']:.1f} s** wall at --jobs {row['jobs']}, {row['fixtures']} fixtures, {row['turns']} "
            f"turns, {row['seed_failures']} seed failures, {row['faults']} faults; phase time: template+init "
            f"{part('template_init')}, clone {part('clone')}, seed {part('seed')}, brain start (warm-up call) "
            f"{part('brain_start')}, hook calls {calls['total_s']:.0f} s/{calls['count']} (p50 "
            f"{calls['p50_ms'] or 0:.0f} ms, p95 {calls['p95_ms'] or 0:.0f} ms, {calls['over_deadline']} over "
            f"{calls['deadline_ms']:.0f} ms), write-back {part('write_back')}, operations {part('operations')}, "
            f"teardown {part('teardown')}; CPUs per seam container {row.get('cpus') or 'no quota'}; shares: {share}")


# What scaling() records per size, and for the pair (results.json adds update_docs' stamp).
SCALE_FIELDS = ("scale", "wall_s", "fixtures", "turns", "exit", "faults", "seed_failures", "s_per_turn",
                "s_per_fixture", "hook_p50_ms", "hook_p95_ms", "over_deadline", "hook_calls", "load_1m_before")
SCALING_FIELDS = ("image", "jobs", "cpus", "runs", "turn_ratio", "wall_ratio", "per_turn_ratio")


def _size(row: dict[str, Any], scale: int) -> dict[str, Any]:
    calls = row["phases"]["hook_calls"]
    return {"scale": scale, "wall_s": row["wall_s"], "fixtures": row["fixtures"], "turns": row["turns"],
            "exit": row["exit"], "faults": row["faults"], "seed_failures": row["seed_failures"],
            "s_per_turn": round(row["wall_s"] / max(1, row["turns"]), 3),
            "s_per_fixture": round(row["wall_s"] / max(1, row["fixtures"]), 3),
            "hook_p50_ms": calls["p50_ms"], "hook_p95_ms": calls["p95_ms"],
            "over_deadline": calls["over_deadline"], "hook_calls": calls["count"],
            "load_1m_before": row["load_1m_before"]}


def scaling(args: list[str], scale: int, image: str = IMAGE) -> dict[str, Any]:
    """The image on a generated corpus at 1× and at ``scale``×: is the larger run's wall time the
    smaller one's times the growth in graded turns?  (``per_turn_ratio`` 1.00 = linear.)"""
    return summarise(measure(args, image, scale=1), measure(args, image, scale=scale), scale)


def summarise(small: dict[str, Any], large: dict[str, Any], scale: int) -> dict[str, Any]:
    """The scaling row of two ``measure()`` rows, at 1× and at ``scale``×."""
    runs = [_size(small, 1), _size(large, scale)]
    return {"image": large["image"], "jobs": large["jobs"], "cpus": large["cpus"], "runs": runs,
            "turn_ratio": round(runs[1]["turns"] / max(1, runs[0]["turns"]), 2),
            "wall_ratio": round(runs[1]["wall_s"] / max(0.1, runs[0]["wall_s"]), 2),
            "per_turn_ratio": round(runs[1]["s_per_turn"] / max(0.001, runs[0]["s_per_turn"]), 2)}


def scaling_line(row: dict[str, Any]) -> str:
    """The README's result cell for the scaling row."""
    small, large = row["runs"]

    def size(got: dict[str, Any]) -> str:
        return (f"{got['scale']}×: {got['fixtures']} fixtures, {got['turns']} turns, **{got['wall_s']:.1f} s** "
                f"({got['s_per_turn']:.2f} s per turn; hook p50 {got['hook_p50_ms'] or 0:.0f} ms, p95 "
                f"{got['hook_p95_ms'] or 0:.0f} ms, {got['over_deadline']} of {got['hook_calls']} calls over "
                f"800 ms; {got['faults']} faults, {got['seed_failures']} seed failures, exit {got['exit']})")

    return (f"{size(small)}; {size(large)}; {row['turn_ratio']:.2f}× the turns took {row['wall_ratio']:.2f}× the "
            f"time: wall per turn at {large['scale']}× is {row['per_turn_ratio']:.2f}× that at 1× (1.00 = linear) "
            f"at --jobs {row['jobs']}, CPUs per seam container {row.get('cpus') or 'no quota'}")


def main(argv: list[str]) -> int:
    image, warm_up = IMAGE, True
    if argv[:1] == ["--image"]:
        image, argv = argv[1], argv[2:]
    keep = None
    if argv[:1] == ["--keep-result"]:
        keep, argv = Path(argv[1]), argv[2:]
    if "--no-warm-up" in argv:
        warm_up, argv = False, [a for a in argv if a != "--no-warm-up"]
    scale = None
    if argv[:1] == ["--scale"]:
        scale, argv = int(argv[1]), argv[2:]
    if scale is not None:
        return one_row.report("gbrain_image", unavailable(image), lambda: scaling(argv, scale, image), scaling_line)
    return one_row.report("gbrain_image", unavailable(image), lambda: measure(argv, image, warm_up, keep), line)

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
