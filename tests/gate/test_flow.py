"""The CLI-level gate flow (spec §10.3) without a corpus."""

from __future__ import annotations

import json
from pathlib import Path

from brainbench.gate.baseline import canonical_baseline, parse_baseline, write_baseline
from brainbench.gate.flow import apply_gate, ci_from_env, compare_files, outcome_json
from brainbench.models.config import RunConfig
from brainbench.models.result import SeedFailure

from ._builders import KTA_METRICS, PUSH_METRICS, make_cell, make_result, row

HARNESSES = ["openclaw"]
SUITES = ["know-to-ask", "push"]


def _gate(result, tmp_path: Path, **kw):
    args = dict(
        harnesses=HARNESSES, suites=SUITES, compare=None, committed=tmp_path / "no-committed.json",
        update_baseline=None, justification=None, allow_regression=None, ci=False,
    )
    args.update(kw)
    return apply_gate(result, **args)


def _main_file(tmp_path: Path, result=None) -> Path:
    p = tmp_path / "main.json"
    write_baseline(canonical_baseline(result or make_result(), harnesses=HARNESSES, suites=SUITES), p)
    return p


def _lost_one_item():
    rows = [row("kta-001", 1, "know-to-ask", [], {"should_retrieve": True, "gold_slugs": ["people/a"]})]
    kta = dict(KTA_METRICS, know_to_ask_failure_rate=1 / 62)
    return make_result(
        [make_cell("openclaw", "know-to-ask", kta, 149, 1), make_cell("openclaw", "push", dict(PUSH_METRICS), 96, 9)],
        turn_rows=rows,
    )


def test_no_flags_is_a_plain_run(tmp_path: Path) -> None:
    report = _gate(make_result(), tmp_path)
    assert (report.outcome, report.exit_code, report.messages) == (None, 0, [])


def test_compare_own_baseline_passes(tmp_path: Path) -> None:
    report = _gate(make_result(), tmp_path, compare=_main_file(tmp_path))
    assert report.exit_code == 0
    assert (report.outcome.verdict, report.outcome.mode) == ("pass", "same-hash")


def test_regression_names_the_lost_item(tmp_path: Path) -> None:
    report = _gate(_lost_one_item(), tmp_path, compare=_main_file(tmp_path))
    assert report.exit_code == 1
    assert "newly-failed items in openclaw/know-to-ask: kta-001#1" in report.outcome.notes


def test_update_baseline_before_compare_makes_it_the_committed(tmp_path: Path) -> None:
    main = _main_file(tmp_path)
    target = tmp_path / "committed.json"
    report = _gate(_lost_one_item(), tmp_path, compare=main, committed=target, update_baseline=target)
    assert report.baseline_written == target
    assert report.exit_code == 1  # updated, but a regression without justification
    assert any("visible delta" in n for n in report.outcome.notes)
    report = _gate(_lost_one_item(), tmp_path, compare=main, committed=target, update_baseline=target,
                   justification="kta-001 is deliberately out of scope now")
    assert report.exit_code == 0
    assert parse_baseline(target).justification == "kta-001 is deliberately out of scope now"


def test_an_adverse_update_warns_that_it_needs_a_justification(tmp_path: Path) -> None:
    target = _main_file(tmp_path)  # the committed baseline being replaced
    report = _gate(_lost_one_item(), tmp_path, update_baseline=target)
    assert report.exit_code == 0
    [warning] = [m for m in report.messages if m.startswith("warning:")]
    assert "openclaw/know-to-ask gold_failed" in warning and "--justification" in warning
    # With a justification, or when nothing moved adversely, there is nothing to warn about.
    _main_file(tmp_path)
    report = _gate(_lost_one_item(), tmp_path, update_baseline=target, justification="scope change")
    assert not [m for m in report.messages if m.startswith("warning:")]
    report = _gate(make_result(), tmp_path, update_baseline=target)
    assert not [m for m in report.messages if m.startswith("warning:")]


def test_update_twice_is_byte_identical(tmp_path: Path) -> None:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    _gate(make_result(harness_sha="1"), tmp_path, update_baseline=a)
    _gate(make_result(harness_sha="2", cmd_args=["--json"]), tmp_path, update_baseline=b)
    assert a.read_bytes() == b.read_bytes()


def test_seed_failures_refuse_update_and_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "updated.json"
    result = make_result(seed_failures=[SeedFailure(fixture_id="kta-009", error="page too large")])
    report = _gate(result, tmp_path, update_baseline=target, compare=_main_file(tmp_path, make_result()))
    assert not target.exists()
    assert report.baseline_written is None
    assert report.exit_code == 2
    assert any("refusing --update-baseline" in m for m in report.messages)
    assert any("SEED FAILURES (1)" in m and "kta-009" in m for m in report.messages)


def test_allow_regression_refused_under_ci(tmp_path: Path) -> None:
    target = tmp_path / "new.json"
    report = _gate(_lost_one_item(), tmp_path, compare=_main_file(tmp_path), allow_regression="trust me",
                   ci=True, update_baseline=target)
    assert report.exit_code == 2
    assert report.outcome is None
    assert not target.exists()  # refused before anything is written
    assert "refused when CI is set" in report.messages[0]


def test_allow_regression_locally(tmp_path: Path) -> None:
    report = _gate(_lost_one_item(), tmp_path, compare=_main_file(tmp_path), allow_regression="e2e test bless")
    assert report.exit_code == 0
    assert "regression allowed: e2e test bless" in report.outcome.notes


def test_bad_main_baseline_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    report = _gate(make_result(), tmp_path, compare=bad)
    assert report.exit_code == 2 and str(bad) in report.messages[0]


def test_committed_default_is_the_corpus_projects_baseline(tmp_path: Path) -> None:
    project, foreign = tmp_path / "project", tmp_path / "elsewhere"
    (project / "baselines").mkdir(parents=True)
    config = RunConfig(project=project)
    assert config.default_committed_baseline() is None  # no file yet: no committed baseline
    (project / "baselines" / "main.json").write_text("{}")
    assert config.default_committed_baseline() == project / "baselines" / "main.json"
    # A corpus outside the project (gbrain's, say) has no committed baseline of ours.
    assert RunConfig(project=project, fixtures_dir=foreign / "fixtures").default_committed_baseline() is None


def test_ci_from_env() -> None:
    assert ci_from_env({"CI": "true"}) and ci_from_env({"CI": "1"})
    assert not ci_from_env({}) and not ci_from_env({"CI": ""}) and not ci_from_env({"CI": "false"})


def test_compare_files(tmp_path: Path) -> None:
    main = _main_file(tmp_path)
    report = compare_files(main, main)
    assert report.exit_code == 0
    assert json.loads(outcome_json(report.outcome)) == {
        "verdict": "pass", "mode": "same-hash", "breaches": [], "notes": []}
    worse = tmp_path / "worse.json"
    write_baseline(canonical_baseline(_lost_one_item(), harnesses=HARNESSES, suites=SUITES), worse)
    report = compare_files(main, worse)
    assert report.exit_code == 1 and report.outcome.breaches
    assert compare_files(main, tmp_path / "missing.json").exit_code == 2
