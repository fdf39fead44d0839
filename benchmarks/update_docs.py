"""Re-run the benchmarks and rewrite the numbers tables in README.md and docs/{TESTING,CONTAINERS,REPORT,SCALING}.md.

    .venv/bin/python benchmarks/update_docs.py                 # the product's numbers (≈ 5 min, quiet 2-core machine)
    .venv/bin/python benchmarks/update_docs.py --only suite,suite-profile   # the test suite's (≈ 25 min)
    .venv/bin/python benchmarks/update_docs.py --render-only   # re-render the tables from benchmarks/results.json
    .venv/bin/python benchmarks/update_docs.py --only gate --executor docker --mode exec   # one row
    .venv/bin/python benchmarks/update_docs.py --only gbrain-image   # gbrain's real hook image (minutes;
                                 # BRAINBENCH_GBRAIN_IMAGE_RESULT=FILE keeps that run's result JSON)
    .venv/bin/python benchmarks/update_docs.py --only gbrain-image-scale   # the same at 1× and 10× (minutes)
    .venv/bin/python benchmarks/update_docs.py --only versus-gbrain   # the embedded gate run against gbrain's
                                 # own BrainBench on its corpus, paired (needs scripts/build-gbrain's staging)

Measurements land in benchmarks/results.json (each row with its date, the 1-minute
load average and the core count, so a noisy number says so); the tables are
rendered from that file only (benchmarks/doc_tables.py), and a test fails when
the committed tables are not what the current code renders from it.

Without a reachable Docker engine the Docker rows are skipped with a note: an
earlier measurement stays (with its own date), or the row says it was not measured.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import doc_tables  # a sibling script, not a package
from engine import docker_client  # a sibling script too

GATE_KEYS = {("local", "stream"): "gate/local/stream", ("local", "exec"): "gate/local/exec",
             ("docker", "stream"): "gate/docker/stream", ("docker", "exec"): "gate/docker/exec"}
PARTS = ("gate", "scale", "cold", "stream", "exec", "trace", "scaling")
# The test suite's own time and where its CPU goes: minutes each, so only when asked for.
SUITE_PARTS = ("suite", "suite-profile")
# gbrain's real hook image (minutes, and it needs the image) and gbrain's own bench (it needs a gbrain
# checkout): only when asked for.
IMAGE_PARTS = ("gbrain-image", "gbrain-image-scale", "versus-gbrain")
# The generated corpus' size for gbrain-image-scale, against 1×.
IMAGE_SCALE = 10
# Modules shown in docs/TESTING.md's "where the suite's CPU goes" table.
PROFILE_TOP = 12


def _stamp() -> dict[str, Any]:
    return {"measured_on": dt.date.today().isoformat(), "load_1m": round(os.getloadavg()[0], 1),
            "cores": os.cpu_count() or 1}


def docker_unavailable() -> str | None:
    """Why Docker rows cannot be measured here, or None."""
    client, why = docker_client()
    if client is not None:
        client.close()
    return why


def measure_gate(rows: dict[str, Any], executors: list[str], modes: list[str], docker_seams: str | None) -> None:
    import gate_run

    baseline = None
    combos = [(e, m) for e in ("local", "docker") for m in ("stream", "exec") if e in executors and m in modes]
    if ("local", "stream") not in combos:
        combos.insert(0, ("local", "stream"))  # the reference every other row is compared with
        reference_only = True
    else:
        reference_only = False
    no_docker = docker_unavailable() if "docker" in executors else None
    for executor, mode in combos:
        key = GATE_KEYS[(executor, mode)]
        if executor == "docker" and no_docker:
            note = f"skipped on {dt.date.today().isoformat()}: {no_docker}"
            print(f"{key}: {note}" + ("; keeping the earlier measurement" if key in rows else ""))
            if key not in rows or "skipped" in rows[key]:
                rows[key] = {"skipped": no_docker, "measured_on": dt.date.today().isoformat()}
            continue
        args = ["--executor", executor, "--mode", mode]
        if executor == "docker" and docker_seams:
            args += ["--seams", docker_seams]
        print(f"{key}: brainbench run {' '.join(args)} …", flush=True)
        stamp = _stamp()
        numbers, doc = gate_run.measure(args)
        same = None if baseline is None else gate_run.comparable(doc) == baseline
        if (executor, mode) == ("local", "stream"):
            baseline = gate_run.comparable(doc)
            if reference_only:
                continue
        rows[key] = {**numbers, **stamp, "identical": same}
        print(f"  {doc_tables._gate_result(rows[key])}")


def measure_scale(rows: dict[str, Any]) -> None:
    import gate_run

    print("gate/local/stream/scale3: brainbench run on a 3× generated corpus …", flush=True)
    stamp = _stamp()
    numbers, _ = gate_run.measure([], scale=3)
    rows["gate/local/stream/scale3"] = {**numbers, **stamp, "identical": None}  # another corpus: nothing to compare
    print(f"  {doc_tables._gate_result(rows['gate/local/stream/scale3'])}")


def measure_cold(rows: dict[str, Any], fixtures: int) -> None:
    import cold_start

    print(f"cold: {fixtures} fixtures × 3 seams, one process per call …", flush=True)
    stamp = _stamp()
    rows["cold"] = {**cold_start.summary(cold_start.measure(fixtures)), **stamp}
    print(f"  warm p50 {rows['cold']['warm']['p50_ms']} ms, in-process p50 {rows['cold']['in-process']['p50_ms']} ms")


def measure_stream(rows: dict[str, Any]) -> None:
    import stream_overhead

    print("stream-overhead: 500 calls per seam …", flush=True)
    stamp = _stamp()
    rows["stream-overhead"] = {"seams": stream_overhead.measure(500), **stamp}


def measure_exec(rows: dict[str, Any]) -> None:
    import exec_overhead

    print("exec-overhead: 300 do-nothing exec-mode calls per call server variant (Docker) …", flush=True)
    stamp = _stamp()
    rows["exec-overhead"] = {"variants": exec_overhead.measure(300), **stamp}


def measure_trace(rows: dict[str, Any]) -> None:
    import trace_overhead

    print("trace-overhead: 3 rounds of the full gate run with and without the diagnosis …", flush=True)
    stamp = _stamp()
    rows["trace-overhead"] = {**trace_overhead.measure(3), **stamp}


def measure_scaling(rows: dict[str, Any], scale: int = 10) -> None:
    import scale_run

    print(f"scaling: brainbench run on 1×, 3× and {scale}× generated corpora …", flush=True)
    stamp = _stamp()
    rows["scaling"] = {**scale_run.summary([scale_run.measure(k, []) for k in (1, 3, scale)]), **stamp}
    print(f"  {scale_run.verdict(rows['scaling'])}")


def measure_suite(rows: dict[str, Any]) -> None:
    import suite_time

    print("suite: bash scripts/test -q, as CI runs it …", flush=True)
    stamp = _stamp()
    rows["suite"] = {**suite_time.measure(), **stamp}
    print(f"  {suite_time.line(rows['suite'])}")


def measure_suite_profile(rows: dict[str, Any]) -> None:
    import suite_profile

    print("suite-profile: the parallel pass's tests one at a time, each charged the machine's busy CPU …",
          flush=True)
    stamp = _stamp()
    code, tests = suite_profile.measure([])
    rows["suite-profile"] = {**suite_profile.by_module(tests, PROFILE_TOP), "exit": code, **stamp}
    print(f"  {rows['suite-profile']['cpu_s']:.0f} CPU-s over {rows['suite-profile']['tests']} tests")


def _measure_optional(rows: dict[str, Any], key: str, why: str | None, doing: str,
                      measure: Callable[[], dict[str, Any]], line: Callable[[dict[str, Any]], str]) -> None:
    """A row that needs what this machine may lack (an image, a gbrain checkout): measured, or ``why`` not,
    keeping an earlier measurement."""
    if why:
        print(f"{key}: not measured: {why}" + ("; keeping the earlier measurement" if key in rows else ""))
        if key not in rows or "skipped" in rows[key]:
            rows[key] = {"skipped": why, "measured_on": dt.date.today().isoformat()}
        return
    print(f"{key}: {doing} …", flush=True)
    stamp = _stamp()
    rows[key] = {**measure(), **stamp}
    print(f"  {line(rows[key])}")


def measure_gbrain_image(rows: dict[str, Any]) -> None:
    import gbrain_image

    keep = os.environ.get("BRAINBENCH_GBRAIN_IMAGE_RESULT")  # also keep the run's result (turn rows)
    _measure_optional(rows, "gbrain-image", gbrain_image.unavailable(),
                      "brainbench run --executor docker --image claude-code=brainbench/gbrain:latest",
                      lambda: gbrain_image.measure([], keep=Path(keep) if keep else None), gbrain_image.line)


def measure_gbrain_image_scale(rows: dict[str, Any]) -> None:
    import gbrain_image

    _measure_optional(rows, "gbrain-image-scale", gbrain_image.unavailable(),
                      f"the image on generated corpora at 1× and {IMAGE_SCALE}×",
                      lambda: gbrain_image.scaling([], IMAGE_SCALE), gbrain_image.scaling_line)


def measure_versus_gbrain(rows: dict[str, Any]) -> None:
    import versus_gbrain

    _measure_optional(rows, "versus-gbrain", versus_gbrain.unavailable(),
                      "brainbench run against gbrain eval brainbench on gbrain's corpus, paired",
                      versus_gbrain.measure, versus_gbrain.line)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--render-only", action="store_true", help="only re-render the tables from results.json")
    parser.add_argument("--only", default=",".join(PARTS),
                        help=f"comma-separated subset of {','.join(PARTS + SUITE_PARTS + IMAGE_PARTS)} "
                             f"(default: {','.join(PARTS)})")
    parser.add_argument("--executor", default="local,docker", help="gate rows: local, docker or both")
    parser.add_argument("--mode", default="stream,exec", help="gate rows: stream, exec or both")
    parser.add_argument("--fixtures", type=int, default=20, help="fixtures for the cold-start benchmark")
    parser.add_argument("--docker-seams", help="a seams.toml for the Docker rows (e.g. images under another tag)")
    args = parser.parse_args(argv)
    parts = [p.strip() for p in args.only.split(",") if p.strip()]
    executors = [e.strip() for e in args.executor.split(",") if e.strip()]
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    bad = [p for p in parts if p not in PARTS + SUITE_PARTS + IMAGE_PARTS] + [
        e for e in executors if e not in ("local", "docker")] + [m for m in modes if m not in ("stream", "exec")]
    if bad:
        parser.error(f"unknown value(s): {', '.join(bad)}")
    doc = doc_tables.load() if doc_tables.RESULTS.exists() else {"format": doc_tables.FORMAT, "rows": {}}
    if not args.render_only:
        rows = doc["rows"]
        measures = {"gate": lambda: measure_gate(rows, executors, modes, args.docker_seams),
                    "scale": lambda: measure_scale(rows), "cold": lambda: measure_cold(rows, args.fixtures),
                    "stream": lambda: measure_stream(rows), "exec": lambda: measure_exec(rows),
                    "trace": lambda: measure_trace(rows), "scaling": lambda: measure_scaling(rows),
                    "suite": lambda: measure_suite(rows), "suite-profile": lambda: measure_suite_profile(rows),
                    "gbrain-image": lambda: measure_gbrain_image(rows),
                    "gbrain-image-scale": lambda: measure_gbrain_image_scale(rows),
                    "versus-gbrain": lambda: measure_versus_gbrain(rows)}
        for part in (p for p in PARTS + SUITE_PARTS + IMAGE_PARTS if p in parts):
            try:
                measures[part]()
            except RuntimeError as exc:
                print(f"update_docs: {exc}", file=sys.stderr)
                return 2
            finally:
                # Saved and rendered after every part: what was measured before a failure is kept, and
                # the suite parts run the tests that hold the committed tables to results.json.
                doc_tables.save(doc)
                doc_tables.write_docs(doc)
    changed = doc_tables.write_docs(doc)
    print("rewrote: " + (", ".join(str(p.relative_to(doc_tables.REPO)) for p in changed) or "nothing changed"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
