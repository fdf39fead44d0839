"""The numbers tables in the docs are what the benchmark scripts render from their recorded measurements.

A format check, not a timing test: nothing here measures anything.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
STAMP = {"measured_on", "load_1m", "cores"}


def _load(name: str) -> ModuleType:
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # the scripts import their siblings by name
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


doc_tables = _load("doc_tables")
gate_run = _load("gate_run")
trace_overhead = _load("trace_overhead")
scale_run = _load("scale_run")
suite_time = _load("suite_time")
suite_profile = _load("suite_profile")
gbrain_image = _load("gbrain_image")
versus_gbrain = _load("versus_gbrain")


def test_committed_tables_are_what_the_scripts_render() -> None:
    stale = doc_tables.stale_blocks(doc_tables.load())
    assert not stale, ("edited by hand or rendered by older code; run "
                       f"`.venv/bin/python benchmarks/update_docs.py --render-only`: {stale}")


def test_recorded_rows_hold_what_the_scripts_measure() -> None:
    rows = doc_tables.load()["rows"]
    gate_keys = [key for key, _, _ in doc_tables.GATE_ROWS]
    known = {*gate_keys, "cold", "stream-overhead", "exec-overhead", "trace-overhead", "scaling", "suite",
             "suite-profile", "gbrain-image", "gbrain-image-scale", "versus-gbrain", "mutation"}
    assert set(rows) <= known, sorted(rows)
    # Rows that need an image or a gbrain checkout: skipped with a reason, or every field their script records.
    optional = {"gbrain-image": (gbrain_image.FIELDS, gbrain_image.line),
                "versus-gbrain": (versus_gbrain.FIELDS, versus_gbrain.line),
                "gbrain-image-scale": (gbrain_image.SCALING_FIELDS, gbrain_image.scaling_line)}
    for key, (fields, line) in optional.items():
        row = rows.get(key)
        if row is None:
            continue
        if "skipped" in row:
            assert set(row) == {"skipped", "measured_on"}, key
            continue
        assert set(row) == {*fields, *STAMP}, key
        line(row)  # renders with the current script's format
    if "gbrain-image-scale" in rows and "runs" in rows["gbrain-image-scale"]:
        assert [set(got) for got in rows["gbrain-image-scale"]["runs"]] == [set(gbrain_image.SCALE_FIELDS)] * 2
    for key in gate_keys:
        row = rows.get(key)
        if row is None:
            continue
        if "skipped" in row:
            assert set(row) == {"skipped", "measured_on"}, key
        else:
            assert set(row) == {*gate_run.FIELDS, *STAMP, "identical"}, key
    if "cold" in rows:
        assert set(rows["cold"]) == {"fixtures", "python", "warm", "in-process", *STAMP}
        for config in ("warm", "in-process"):
            assert set(rows["cold"][config]) == {"p50_ms", "p95_ms", "calls", "imports_ms", "seam_p50_ms"}
    if "exec-overhead" in rows:
        assert set(rows["exec-overhead"]) == {"variants", *STAMP}
        for variant in rows["exec-overhead"]["variants"].values():
            assert set(variant) == {"p50_ms", "p95_ms", "calls"}
    if "trace-overhead" in rows:
        trace_overhead.table(rows["trace-overhead"])  # renders with the current script's format
    if "scaling" in rows:
        scale_run.table(rows["scaling"])
        scale_run.verdict(rows["scaling"])
    if "suite" in rows:
        assert set(rows["suite"]) == {"passes", "total_s", "passed", "failed", "skipped", "errors", "exit", *STAMP}
        assert set(rows["suite"]["passes"]) == set(suite_time.PASSES)
        assert rows["suite"]["exit"] == 0 and rows["suite"]["failed"] == rows["suite"]["errors"] == 0
    if "mutation" in rows:
        assert set(rows["mutation"]) == {"modules", *STAMP}
        for module, m in rows["mutation"]["modules"].items():
            assert set(m) == {"tests", "functions", "mutants", "killed", "survived"}, module
            assert m["killed"] + len(m["survived"]) == m["mutants"], module
    if "suite-profile" in rows:
        assert set(rows["suite-profile"]) == {"tests", "cpu_s", "wall_s", "modules", "exit", *STAMP}
        assert all(len(module) == 4 for module in rows["suite-profile"]["modules"])


def test_the_suite_counts_come_from_each_pass_summary() -> None:
    # What `pytest -q` ends each of scripts/test's passes with (xdist or not), and a deselection-only pass.
    output = "\n".join([
        "...... [100%]", "1359 passed, 2 skipped in 395.27s (0:06:35)",
        "===== 1 failed, 88 passed in 62.33s (0:01:02) =====",
        "22 passed, 1450 deselected in 106.71s (0:01:46)", "46 deselected in 0.13s",
        "tests/x.py::test_passed_in_name 3 passed in a comment"])
    assert suite_time.counts(output) == {"passed": 1469, "failed": 1, "skipped": 2, "errors": 0}
    row = {"passes": {"parallel": 395.3, "serial": 62.3, "alone": 106.7}, "total_s": 564.3, "passed": 1469,
           "failed": 1, "skipped": 2, "errors": 0, "exit": 1}
    assert suite_time.line(row) == ("1,472 tests (1,469 passed, 2 skipped, **1 failed, 0 errors (exit 1)**) in "
                                    "**9.4 min** of passes (parallel 6.6 min, serial 1.0 min, alone 1.8 min)")


def test_the_profile_runs_the_parallel_pass_of_scripts_test() -> None:
    # Its `-m` replaces pyproject's, so it must leave out what scripts/test leaves out (the gbrain tests,
    # which error without a gbrain checkout) or the README's profile counts tests CI never runs.
    script = (BENCHMARKS.parent / "scripts" / "test").read_text()
    parallel = re.search(r'run_pass parallel .*?-m "([^"]+)"', script, re.S)
    assert parallel is not None, "scripts/test has no parallel pass with a -m selection"
    assert suite_profile.PARALLEL_PASS == parallel.group(1)
    assert "not gbrain" in suite_profile.PARALLEL_PASS


def test_a_hand_edit_is_caught_and_rewrite_restores_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = doc_tables.load()
    readme = tmp_path / "README.md"
    readme.write_text(doc_tables.README.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.setattr(doc_tables, "BLOCKS", {readme: ("readme-benchmarks",)})
    monkeypatch.setattr(doc_tables, "REPO", tmp_path)
    assert doc_tables.stale_blocks(doc) == []
    text = readme.read_text(encoding="utf-8")
    body = doc_tables.committed_block(text, "readme-benchmarks")
    assert body and "| what |" in body
    readme.write_text(text.replace(body, body.replace("|---|", "|--|", 1)), encoding="utf-8")
    assert doc_tables.stale_blocks(doc) == ["README.md: readme-benchmarks"]
    assert doc_tables.write_docs(doc) == [readme]
    assert doc_tables.stale_blocks(doc) == []
    with pytest.raises(ValueError, match="markers"):
        doc_tables.rewrite("no markers here", "readme-benchmarks", "x")


def test_the_gbrain_image_benchmark_says_why_it_did_not_run(capsys: pytest.CaptureFixture[str]) -> None:
    missing = "bbtest-absent/gbrain:none"
    assert gbrain_image.main(["--image", missing]) == 2
    said = capsys.readouterr().err
    assert said.startswith("gbrain_image: not run: ")
    # With an engine it names the missing image and how to build it; without one, that there is no engine.
    assert f"image {missing} is not on the engine (build it: scripts/build-gbrain" in said or "no Docker engine" in said


def test_the_gbrain_image_scaling_row_judges_wall_time_per_graded_turn() -> None:
    def row(wall: float, fixtures: int, turns: int, over: int) -> dict[str, object]:
        calls = {"count": turns, "p50_ms": 600.0, "p95_ms": 900.0, "over_deadline": over, "total_s": 1.0,
                 "max_ms": 1000.0, "deadline_ms": 800}
        return {"image": "brainbench/gbrain:latest", "exit": 0, "wall_s": wall, "jobs": 2, "fixtures": fixtures,
                "turns": turns, "seed_failures": 0, "faults": 0, "load_1m_before": 0.1, "cpus": 2.0,
                "phases": {"hook_calls": calls}}

    # Ten times the turns in 9.5 times the time (start-up amortised): 0.95 of the wall per turn.
    grown = gbrain_image.summarise(row(100.0, 10, 200, 3), row(950.0, 100, 2000, 30), 10)
    assert set(grown) == set(gbrain_image.SCALING_FIELDS)
    assert [set(got) for got in grown["runs"]] == [set(gbrain_image.SCALE_FIELDS)] * 2
    assert (grown["turn_ratio"], grown["wall_ratio"], grown["per_turn_ratio"]) == (10.0, 9.5, 0.95)
    said = gbrain_image.scaling_line(grown)
    assert "10×: 100 fixtures, 2000 turns, **950.0 s** (0.47 s per turn" in said
    assert "30 of 2000 calls over 800 ms" in said and "is 0.95× that at 1× (1.00 = linear)" in said


def test_the_paired_benchmark_against_gbrain_says_why_it_did_not_run(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert versus_gbrain.main(["--gbrain", str(tmp_path / "no-checkout")]) == 2
    said = capsys.readouterr().err
    assert said.startswith("versus_gbrain: not run: no ") and "no-checkout/src/cli.ts (a gbrain checkout" in said
