"""The ``--behaviour`` choice in the baseline, the gate and the run's options.

A baseline records the release only when it is not the newest (gbrain 0.60 writes no such
key, and our 0.60 baselines keep gbrain's exact shape); the gate never compares across two.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.gate.baseline import canonical_baseline, parse_baseline_text, serialize_baseline
from brainbench.gate.compare import compare_baselines, exit_code_for
from brainbench.models.config import RunConfig
from brainbench.models.result import RunInfo

from ._builders import baseline, make_result

REPO = Path(__file__).resolve().parents[2]
GBRAIN_SCHEMA = REPO / "tests" / "data" / "reference" / "schema" / "baseline.schema.json"


def _with(behaviour: str | None):  # type: ignore[no-untyped-def]
    b = baseline()
    return b.model_copy(update={"config": b.config.model_copy(update={"behaviour": behaviour})})


def _result(behaviour: str | None):  # type: ignore[no-untyped-def]
    result = make_result()
    result.meta.run = RunInfo(run_id="r", executor="local", jobs=1, started_at="t", behaviour=behaviour)
    return result


@pytest.mark.parametrize(("main", "current"), [("0.46", "0.60"), ("0.60", "0.46"), (None, "0.46")])
def test_the_gate_refuses_to_compare_across_releases_in_one_line(main: str | None, current: str) -> None:
    out = compare_baselines(_with(current), _with(main))
    assert out.verdict == "inconclusive" and exit_code_for(out.verdict) == 2
    [note] = out.notes
    theirs = main or "0.60"
    assert note.startswith(f"behaviour mismatch: main's baseline was made with gbrain {theirs}'s behaviour, this run "
                           f"followed gbrain {current}'s")
    assert f"--behaviour {theirs}" in note and "\n" not in note


def test_the_same_release_compares_and_absent_reads_as_the_newest() -> None:
    assert compare_baselines(_with("0.46"), _with("0.46")).verdict == "pass"
    assert compare_baselines(_with("0.60"), _with(None)).verdict == "pass"
    both = compare_baselines(_with("0.46").model_copy(update={"config": _with("0.46").config.model_copy(
        update={"include_holdout": True})}), _with(None))
    assert both.verdict == "inconclusive" and len(both.notes) == 2  # each mismatch named


def test_a_baseline_records_the_older_release_after_suites_and_keeps_gbrains_shape_otherwise() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    gbrain = json.loads(GBRAIN_SCHEMA.read_text())
    newest = serialize_baseline(canonical_baseline(_result("0.60"), harnesses=["openclaw"], suites=["push"]))
    unknown = serialize_baseline(canonical_baseline(_result(None), harnesses=["openclaw"], suites=["push"]))
    assert newest == unknown and '"behaviour"' not in newest
    jsonschema.validate(json.loads(newest), gbrain)
    older = canonical_baseline(_result("0.46"), harnesses=["openclaw"], suites=["push"])
    text = serialize_baseline(older)
    assert list(json.loads(text)["config"]) == ["include_holdout", "llm", "harnesses", "suites", "behaviour"]
    assert json.loads(text)["config"]["behaviour"] == "0.46"
    assert text.replace(',\n    "behaviour": "0.46"', "") == newest  # nothing else differs
    parsed = parse_baseline_text(text, "b.json")
    assert parsed.config.behaviour == "0.46" and serialize_baseline(parsed) == text
    explicit = json.loads(newest)
    explicit["config"]["behaviour"] = "0.60"
    assert serialize_baseline(parse_baseline_text(json.dumps(explicit), "b.json")) == newest


def test_the_committed_baseline_is_the_newer_releases_in_gbrains_exact_shape() -> None:
    doc = json.loads((REPO / "baselines" / "main.json").read_text())
    assert "behaviour" not in doc["config"]  # 0.60: gbrain writes no such key
    assert doc["config"]["suites"] == sorted(["know-to-ask", "push", "write-back", "continuity", "trust",
                                              "state-resolution", "poisoning", "deletion"])


def _project(tmp_path: Path, recorded: object) -> Path:
    (tmp_path / "fixtures").mkdir()
    (tmp_path / "baselines").mkdir()
    if recorded is not None:
        doc = json.loads(serialize_baseline(baseline()))
        if recorded != "absent":
            doc["config"]["behaviour"] = recorded
        (tmp_path / "baselines" / "main.json").write_text(json.dumps(doc) if recorded != "garbage" else "{")
    return tmp_path


@pytest.mark.parametrize(("recorded", "given", "expected", "from_baseline"), [
    ("0.46", None, "0.46", True),  # until that baseline is regenerated, a run gates like with like
    ("0.46", "0.60", "0.60", False),
    ("absent", None, "0.60", False),
    ("garbage", None, "0.60", False),  # the gate names an unreadable baseline, not the options
    (None, None, "0.60", False),
    (None, "0.46", "0.46", False),
])
def test_the_default_follows_the_committed_baseline_else_the_newest(tmp_path: Path, recorded: object,
                                                                    given: str | None, expected: str,
                                                                    from_baseline: bool) -> None:
    project = _project(tmp_path, recorded)
    config = RunConfig(project=project, **({"behaviour": given} if given else {}))
    assert config.behaviour == expected
    assert config.behaviour_from == (project / "baselines" / "main.json" if from_baseline else None)
    # A corpus from elsewhere has no committed baseline of its own.
    foreign = RunConfig(project=project, fixtures_dir=tmp_path.parent, **({"behaviour": given} if given else {}))
    assert foreign.behaviour == (given or "0.60")
