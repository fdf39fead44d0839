"""gbrain-evals' category runner (``eval/runner/cat34-brainbench-memory.ts``) can drive us.

It spawns ``<cli> eval brainbench --harness all --suite all --json --out FILE`` from the
benchmark's checkout with provider keys stripped, refuses a missing or stale ``--out``
(mtime older than the run), validates the document (gbrain's ``result.schema.json``,
``result_schema_version == 1``, ``cells[]``, ``seed_failures[]``) and fails on any non-zero
exit.  The first test does exactly that against this checkout (whose corpus holds all eight
suites, so ``--suite all`` returns eight); the rest pin that every result we write — ``--compare``
included — validates against gbrain 0.60's schema, and a 4-suite result still against v0.46's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[2]
GBRAIN_RESULT_SCHEMA = REPO / "tests" / "data" / "reference-trust" / "schema-v0.60" / "result.schema.json"
GBRAIN_046_RESULT_SCHEMA = REPO / "tests" / "data" / "reference" / "schema" / "result.schema.json"
BENCH = [sys.executable, "-m", "brainbench.cli"]
CLASSIC = {"know-to-ask", "push", "write-back", "continuity"}
SUITES = CLASSIC | {"trust", "state-resolution", "poisoning", "deletion"}


def _stripped_env() -> dict[str, str]:
    """What cat34 hands its subprocess: the caller's env minus provider keys."""
    env = {k: v for k, v in os.environ.items() if not re.search(r"(?:_API_KEY|_AUTH_TOKEN)$", k, re.I)}
    env.pop("CI", None)
    return {k: v for k, v in env.items() if not k.startswith("BRAINBENCH_")}


def _cat34_checks(out: Path, started: float, proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert out.exists(), f"no fresh result artifact (exit {proc.returncode}): {proc.stderr[-2000:]}"
    assert out.stat().st_mtime >= started - 2, "result artifact predates this run"
    doc = json.loads(out.read_text())
    jsonschema.validate(doc, json.loads(GBRAIN_RESULT_SCHEMA.read_text()))
    if {c["suite"] for c in doc["cells"]} <= CLASSIC and {r["suite"] for r in doc["turn_rows"]} <= CLASSIC:
        jsonschema.validate(doc, json.loads(GBRAIN_046_RESULT_SCHEMA.read_text()))
    assert doc["receipt"]["result_schema_version"] == 1
    assert isinstance(doc["cells"], list) and doc["cells"]
    assert isinstance(doc["seed_failures"], list)
    for cell in doc["cells"]:
        assert {"harness", "seam", "suite", "gold_total", "gold_failed", "metrics"} <= set(cell)
    return doc


def test_cat34_invocation_from_our_checkout(tmp_path: Path) -> None:
    out = tmp_path / "reports" / "result-nonce.json"
    out.parent.mkdir()
    started = time.time()
    proc = subprocess.run([*BENCH, "eval", "brainbench", "--harness", "all", "--suite", "all", "--json",
                           "--out", str(out)], cwd=REPO, env=_stripped_env(), capture_output=True, text=True,
                          timeout=900, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = _cat34_checks(out, started, proc)
    assert {c["suite"] for c in doc["cells"]} == SUITES
    assert doc["seed_failures"] == []
    assert doc["receipt"]["include_holdout"] is False
    assert json.loads(proc.stdout) == doc  # --json: the same document, one line, on stdout
    # It was a run of this checkout's corpus, resolved from the working directory.
    assert doc["receipt"]["fixtures_hash"] == json.loads((REPO / "fixtures" / "_ledger.json").read_text())[
        "fixtures_hash"]


@pytest.fixture
def foreign_project(reference: Path, tmp_path: Path) -> Path:
    """gbrain's 7 hand-authored fixtures as a project of their own, with no committed baseline."""
    project = tmp_path / "gbrain-corpus"
    shutil.copytree(reference / "corpus" / "fixtures", project / "fixtures")
    shutil.copytree(reference / "corpus" / "gold", project / "gold")
    return project


def test_compare_result_validates_and_needs_no_committed_baseline(foreign_project: Path, tmp_path: Path) -> None:
    main = tmp_path / "gbrain-main.json"  # main's baseline, kept outside the project
    common = ["--harness", "codex", "--jobs", "1"]
    first = subprocess.run([*BENCH, "run", *common, "--update-baseline", str(main)], cwd=foreign_project,
                           env=_stripped_env(), capture_output=True, text=True, timeout=600, check=False)
    assert first.returncode == 0 and main.is_file(), first.stderr[-3000:]
    out = tmp_path / "result.json"
    out.write_text("{}")  # a stale artifact from an earlier run
    os.utime(out, (0, 0))
    started = time.time()
    proc = subprocess.run([*BENCH, "eval", "brainbench", *common, "--json", "--out", str(out),
                           "--compare", str(main)], cwd=foreign_project, env=_stripped_env(),
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    doc = _cat34_checks(out, started, proc)
    assert "compare" not in doc  # gbrain's schema forbids unknown top-level keys
    assert doc["_meta"]["compare"]["verdict"] == "pass"
    assert not (foreign_project / "baselines").exists()


def test_a_failed_run_leaves_no_stale_out(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    out.write_text('{"receipt": {"result_schema_version": 1}, "cells": [], "seed_failures": []}')
    (tmp_path / "fixtures").mkdir()  # half a project (no gold/): the run cannot start
    proc = subprocess.run([*BENCH, "eval", "brainbench", "--json", "--out", str(out)], cwd=tmp_path,
                          env=_stripped_env(), capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert not out.exists()


def test_results_written_before_the_move_still_read() -> None:
    from brainbench.models.result import RunResult

    doc = {"receipt": {"result_schema_version": 1, "fixtures_hash": "h", "harness_sha": "s",
                       "ts": "2026-01-01T00:00:00.000Z", "cmd_args": [], "seed": 42, "include_holdout": False,
                       "llm": False},
           "cells": [], "turn_rows": [], "seed_failures": [], "_meta": {},
           "compare": {"verdict": "pass", "mode": "same-hash", "breaches": [], "notes": []}}
    result = RunResult.model_validate(doc)
    assert result.meta.compare is not None and result.meta.compare.verdict == "pass"
    assert "compare" not in result.to_json_dict() and result.to_json_dict()["_meta"]["compare"]["verdict"] == "pass"


def test_the_trace_goes_where_asked_and_never_beside_a_json_out(foreign_project: Path, tmp_path: Path) -> None:
    """A --json run's caller owns the directory of --out (gbrain-evals renames its nonced result): the trace
    goes to --trace FILE when given, else into the project's .brainbench/traces/, newest 10 kept."""
    reports = tmp_path / "reports"
    reports.mkdir()
    common = [*BENCH, "eval", "brainbench", "--harness", "codex", "--suite", "know-to-ask", "--json", "--quiet"]
    asked = tmp_path / "elsewhere" / "t.jsonl"
    proc = subprocess.run([*common, "--out", str(reports / "a.json"), "--trace", str(asked)], cwd=foreign_project,
                          env=_stripped_env(), capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((reports / "a.json").read_text())["_meta"]["trace"]["path"] == str(asked) and asked.is_file()
    traces = foreign_project / ".brainbench" / "traces"
    traces.mkdir(parents=True)
    for n in range(12):  # older traces of earlier runs
        (traces / f"old-{n}.trace.jsonl").write_text("")
        os.utime(traces / f"old-{n}.trace.jsonl", (n, n))
    proc = subprocess.run([*common, "--out", str(reports / "b.json")], cwd=foreign_project, env=_stripped_env(),
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in reports.iterdir()) == ["a.json", "b.json"]
    kept = sorted(p.name for p in traces.iterdir())
    assert len(kept) == 10 and "b.trace.jsonl" in kept and "old-0.trace.jsonl" not in kept, kept
