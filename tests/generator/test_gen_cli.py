"""The ``corpus`` sub-app: generate, sample, check-labels (receipt survives regeneration)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from brainbench.generator.cli import app
from gen_helpers import FIXTURES, GOLD, REPO, load_json
from typer.testing import CliRunner

runner = CliRunner()


def _repo_copy(tmp_path: Path) -> Path:
    shutil.copytree(FIXTURES, tmp_path / "fixtures")
    shutil.copytree(GOLD, tmp_path / "gold")
    return tmp_path


def _perfect_review(sample: dict, gold_dir: Path) -> dict:
    for item in sample["items"]:
        gold = load_json(gold_dir / f"{item['fixture_id']}.gold.json")
        for key, label in item["labels"].items():
            g = gold["turns"].get(key, {"should_retrieve": False})
            label["should_retrieve"] = g["should_retrieve"]
            label["slugs"] = list(g.get("gold_slugs", []))
    return sample


def test_generate_sample_check_labels_round_trip(tmp_path: Path) -> None:
    root = _repo_copy(tmp_path)
    res = runner.invoke(app, ["generate", "--seed", "42", "--project", str(root)])
    assert res.exit_code == 0, res.output
    assert (root / "fixtures" / "_ledger.json").read_bytes() == (FIXTURES / "_ledger.json").read_bytes()

    res = runner.invoke(app, ["sample", "--fraction", "0.1", "--seed", "3", "--project", str(root)])
    assert res.exit_code == 0, res.output
    sample = json.loads(res.stdout)
    assert "gold" not in res.stdout and "should_retrieve\": true" not in res.stdout
    assert {i["category"] for i in sample["items"]} >= {"kta-pos", "kta-neg", "push", "write-back",
                                                       "continuity", "multi-source", "adversarial"}
    review = _perfect_review(sample, root / "gold")
    # One deliberate disagreement so agreement is below 1 and the receipt names it.
    item = next(i for i in review["items"] if i["category"] == "kta-neg")
    first_key = next(iter(item["labels"]))
    item["labels"][first_key]["should_retrieve"] = True
    path = tmp_path / "review.json"
    path.write_text(json.dumps(review), encoding="utf-8")
    res = runner.invoke(app, ["check-labels", str(path), "--project", str(root), "--reviewer", "test",
                              "--date", "2026-01-02"])
    assert res.exit_code == 0, res.output
    ledger = load_json(root / "fixtures" / "_ledger.json")
    gv = ledger["gold_validation"]
    assert gv["status"] == "done" and gv["date"] == "2026-01-02" and 0.8 < gv["agreement"] < 1
    assert gv["disagreements"] == [f"{item['fixture_id']}#{first_key}"]

    # Regeneration with unchanged gold keeps the receipt; a different seed drops it.
    assert runner.invoke(app, ["generate", "--seed", "42", "--project", str(root)]).exit_code == 0
    assert load_json(root / "fixtures" / "_ledger.json")["gold_validation"] == gv
    assert runner.invoke(app, ["generate", "--seed", "43", "--project", str(root)]).exit_code == 0
    assert load_json(root / "fixtures" / "_ledger.json")["gold_validation"]["status"] == "pending"


def test_separate_fixture_and_gold_dirs(tmp_path: Path) -> None:
    res = runner.invoke(app, ["generate", "--seed", "5", "--fixtures", str(tmp_path / "f"),
                              "--gold", str(tmp_path / "g")])
    assert res.exit_code == 0, res.output
    # 135 classic fixtures and the 42 of the memory-trust categories (our default trust mode).
    assert len(list((tmp_path / "f").glob("gen-*.fixture.json"))) == 177
    assert len(list((tmp_path / "g").glob("gen-*.gold.json"))) == 177


def test_cli_import_stays_light() -> None:
    code = ("import sys, brainbench.generator.cli as c; "
            "heavy = [m for m in ('brainbench.generator.corpus', 'pydantic', 'psycopg', 'jsonschema') "
            "if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO)
    assert out.stdout.strip() == "[]"


def test_help_names_no_removed_option() -> None:
    """``--out`` (a directory here, a result file for `run`) was replaced by --project: help must not send
    anyone to it."""
    env = {**os.environ, "COLUMNS": "200"}
    for command in ("generate", "sample", "check-labels"):
        proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "corpus", command, "--help"], cwd=REPO,
                              env=env, capture_output=True, text=True, timeout=60, check=True)
        assert not re.search(r"--out\b(?!put)", proc.stdout), proc.stdout
        assert "--project" in proc.stdout
