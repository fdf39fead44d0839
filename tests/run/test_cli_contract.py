"""The subprocess contract other eval repos rely on: files, streams and exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from brainbench.schemas import schema_for
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

Run = tuple[subprocess.CompletedProcess[str], Path, Path]

REF_FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active", "wb-001-pricing-concern",
                "cont-001-widget-pass-writer", "cont-001-widget-pass-reader")


def small_corpus(reference: Path, root: Path, ids: tuple[str, ...] = REF_FIXTURES) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, root, ids)


def bench(*args: str | Path, env: dict[str, str] | None = None,
          cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    full_env.pop("CI", None)
    return subprocess.run([sys.executable, "-m", "brainbench.cli", "run", *map(str, args)], capture_output=True,
                          text=True, timeout=600, check=False, env=full_env, cwd=cwd)


def strip_volatile(doc: dict[str, Any]) -> dict[str, Any]:
    """Drop what legitimately differs between two runs: timestamps, run id, latencies."""
    doc = json.loads(json.dumps(doc))
    doc["receipt"].pop("ts")
    doc["receipt"].pop("cmd_args")
    run = doc["_meta"].pop("run")
    doc["_meta"].pop("trace", None)  # only a result written to --out references its trace file (hashed, with latencies)
    doc["_meta"].pop("phases", None)  # wall times: measured, differ run to run
    assert run["complete"] is True
    for row in doc["turn_rows"]:
        row.pop("latency_ms")
    return doc


@pytest.fixture(scope="module")
def clean_run(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> Run:
    root = tmp_path_factory.mktemp("contract")
    fx, gd = small_corpus(reference, root)
    out = root / "out" / "result.json"
    proc = bench("--fixtures", fx, "--gold", gd, "--out", out, "--jobs", "1", cwd=root)
    return proc, out, root


def test_clean_run_exit_0_scoreboard_and_file(clean_run: Run) -> None:
    proc, out, root = clean_run
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# BrainBench scoreboard")
    assert "| openclaw | production | know-to-ask |" in proc.stdout
    doc = json.loads(out.read_text())
    assert doc["receipt"]["result_schema_version"] == 1
    assert "thesis failure mode" in doc["_meta"]["metric_glossary"]["know_to_ask_failure_rate"]
    cells = {f"{c['harness']}/{c['suite']}": c for c in doc["cells"]}
    for harness in ("openclaw", "claude-code", "codex"):
        assert cells[f"{harness}/write-back"]["metrics"] == {"write_back_fidelity": 1, "provenance_accuracy": 1}
        assert cells[f"{harness}/continuity"]["metrics"]["continuity_rate"] == 1
    # The ledger lives in the project's .brainbench/ (the cwd here), never next to --out.
    assert (root / ".brainbench" / "brainbench-ledger.jsonl").read_text().count("\n") == 1
    assert not (out.parent / "brainbench-ledger.jsonl").exists()
    assert not list(out.parent.glob(".result.json.*")), "temp file left behind"
    assert out.stat().st_mode & 0o777 == 0o644


def test_result_validates_against_our_schema_and_gbrains(reference: Path, clean_run: Run) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    doc = json.loads(clean_run[1].read_text())
    jsonschema.validate(doc, schema_for("result"))
    jsonschema.validate(doc, json.loads((reference / "schema" / "result.schema.json").read_text()))


def test_json_stdout_is_one_line_and_jobs_do_not_change_results(reference: Path, tmp_path: Path,
                                                                 clean_run: Run) -> None:
    fx, gd = small_corpus(reference, tmp_path)
    proc = bench("--fixtures", fx, "--gold", gd, "--json", "--jobs", "4")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == 1
    parallel = json.loads(proc.stdout)
    serial = json.loads(clean_run[1].read_text())
    assert strip_volatile(parallel) == strip_volatile(serial)


@pytest.mark.parametrize(("setup", "args", "needle"), [
    ("empty", (), "no fixtures found"),
    ("badjson", (), "invalid JSON"),
    ("ok", ("--suite", "continuity", "--harness", "codex"), "vacuous"),
    ("ok", ("--harness", "gemini"), "unknown value"),
    ("ok", ("--no-such-flag",), "No such option"),
    ("bigpage", (), "SEED FAILURES"),
    # Infrastructure that is not there: one line naming it, never a traceback or "internal error".
    ("ok", ("--database-url", "postgresql://nobody@127.0.0.1:9/brain"), "run failed: cannot use the brain database"),
    ("nodocker", ("--executor", "docker"), "run failed: no Docker engine reachable at unix:///nonexistent/"),
])
def test_error_paths_exit_2(reference: Path, tmp_path: Path, setup: str, args: tuple[str, ...], needle: str) -> None:
    if setup == "empty":
        fx, gd = tmp_path / "f", tmp_path / "g"
        fx.mkdir()
        gd.mkdir()
    else:
        fx, gd = small_corpus(reference, tmp_path, ("kta-001-deal-recall",))
    if setup == "badjson":
        (fx / "kta-001-deal-recall.fixture.json").write_text("{oops")
    if setup == "bigpage":
        path = fx / "kta-001-deal-recall.fixture.json"
        doc = json.loads(path.read_text())
        doc["seed_pages"][0]["content"] += "x" * 5_000_001
        path.write_text(json.dumps(doc))
    env = {"DOCKER_HOST": "unix:///nonexistent/docker.sock"} if setup == "nodocker" else None
    proc = bench("--fixtures", fx, "--gold", gd, *args, env=env)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert needle in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]


def test_a_crashing_seam_is_a_fault_not_a_crash(reference: Path, tmp_path: Path) -> None:
    fx, gd = small_corpus(reference, tmp_path, ("kta-001-deal-recall",))
    hook = tmp_path / "crash.py"
    hook.write_text("import sys\nsys.stdin.read()\nsys.stderr.write('kaboom')\nsys.exit(1)\n")
    out = tmp_path / "r.json"
    proc = bench("--fixtures", fx, "--gold", gd, "--out", out,
                 env={"BRAINBENCH_SEAM_COMMAND_CODEX": f"{sys.executable} {hook}"})
    assert proc.returncode == 2, proc.stderr
    doc = json.loads(out.read_text())
    faults = doc["_meta"]["faults"]
    assert {f["harness"] for f in faults} == {"codex"}
    assert {f["fault_class"] for f in faults} == {"adapter_crash"} and "kaboom" in faults[0]["detail"]
    cells = {f"{c['harness']}/{c['suite']}": c for c in doc["cells"]}
    assert cells["openclaw/know-to-ask"]["gold_failed"] == 0  # other seams unaffected
    assert cells["codex/know-to-ask"]["metrics"]["know_to_ask_failure_rate"] == 1
    assert "SEAM FAULTS" in proc.stdout
