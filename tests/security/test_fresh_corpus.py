"""Grading on a corpus nobody has seen (``run --fresh-corpus [SEED]``): the answer to memorised gold.

The committed corpus's gold is public, so a hook that ships it scores perfectly without reading the
brain.  On a corpus generated at grading time it has nothing to recall; an honest seam, which reads
the brain, keeps its grade.  The seed is recorded, or withheld behind a commitment that a revealed
seed can be checked against; the gate compares a fresh corpus only on what no corpus can change.
"""

from __future__ import annotations

import json
import os
import shlex
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
HOOK = Path(__file__).resolve().parent / "hooks" / "memorised_gold_hook.py"
SELECTION = ("--harness", "claude-code", "--suite", "know-to-ask,push", "--jobs", "2", "--quiet",
             "--fixture", "gen-push-00[1-6]", "--fixture", "gen-kta-pos-00[1-6]", "--fixture", "gen-kta-neg-00[1-4]")


def _bench(*args: str | Path, memorised: Path | None = None,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_") and k != "CI"}
    if memorised is not None:
        env["BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE"] = shlex.join([sys.executable, str(HOOK), str(memorised)])
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=900, check=False, env=env, cwd=cwd)


def _memorise(fixtures: Path, gold: Path, out: Path) -> Path:
    """The committed gold as a prompt -> slugs table: what an image that ships the gold carries."""
    table: dict[str, list[str]] = {}
    for path in sorted(fixtures.glob("*.fixture.json")):
        fixture = json.loads(path.read_text())
        turns = json.loads((gold / path.name.replace(".fixture.", ".gold.")).read_text())["turns"]
        for turn in fixture["turns"]:
            g = turns.get(str(turn["turn_id"]))
            if turn["role"] == "user" and g and g["should_retrieve"]:
                table.setdefault(turn["text"], g["gold_slugs"])
    out.write_text(json.dumps(table))
    return out


def _cells(path: Path) -> dict[str, dict[str, Any]]:
    return {c["suite"]: c for c in json.loads(path.read_text())["cells"]}


def test_memorised_gold_is_perfect_on_the_committed_corpus_and_fails_on_a_fresh_one(tmp_path: Path) -> None:
    table = _memorise(REPO / "fixtures", REPO / "gold", tmp_path / "gold-table.json")
    runs = {
        "memorised, committed": ([], table),
        "memorised, fresh": (["--fresh-corpus", "20261202"], table),
        "honest, fresh": (["--fresh-corpus", "20261202"], None),
    }
    cells = {}
    for name, (extra, memorised) in runs.items():
        out = tmp_path / f"{name.replace(', ', '-')}.json"
        corpus = [] if extra else ["--fixtures", REPO / "fixtures", "--gold", REPO / "gold"]
        proc = _bench("run", *corpus, *extra, *SELECTION, "--project", tmp_path, "--out", out, memorised=memorised)
        assert proc.returncode == 0, f"{name}: {proc.stderr[-2000:]}"
        cells[name] = _cells(out)
    memo, fresh, honest = cells["memorised, committed"], cells["memorised, fresh"], cells["honest, fresh"]
    # Perfect without reading the brain: every known prompt answered with exactly its gold.
    assert memo["push"]["metrics"]["push_recall"] == 1 and memo["push"]["metrics"]["push_precision"] == 1
    assert memo["know-to-ask"]["metrics"]["know_to_ask_failure_rate"] == 0
    assert memo["know-to-ask"]["metrics"]["false_fire_rate"] == 0
    # The same fixture ids, other gold: nothing to recall.
    assert fresh["push"]["metrics"]["push_recall"] == 0
    assert fresh["know-to-ask"]["metrics"]["know_to_ask_failure_rate"] == 1
    assert fresh["push"]["gold_total"] > 0 and fresh["push"]["gold_failed"] == fresh["push"]["gold_total"]
    # A seam that reads the brain is graded on the fresh corpus as on the committed one.
    assert honest["push"]["metrics"]["push_recall"] >= 0.9
    assert honest["know-to-ask"]["metrics"]["know_to_ask_failure_rate"] <= 0.1


def test_a_withheld_seed_is_nowhere_in_the_outputs_and_verifies_later(tmp_path: Path) -> None:
    seed = "8675309"
    out = tmp_path / "out" / "result.json"
    proc = _bench("run", "--fresh-corpus", seed, "--withhold-seed", "--harness", "openclaw", "--suite", "push",
                  "--fixture", "gen-push-00[12]", "--quiet", "--project", tmp_path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["receipt"]["seed"] == -1
    assert "<withheld>" in doc["receipt"]["cmd_args"]
    record = doc["_meta"]["fresh_corpus"]
    assert record["seed"] is None and record["salt"] is None and len(record["commitment"]) == 64
    assert record["trust"] == "ours" and record["fixtures"] == 177
    seed_file = tmp_path / "out" / "result.seed.json"
    assert stat.S_IMODE(seed_file.stat().st_mode) == 0o600
    reveal = json.loads(seed_file.read_text())
    assert reveal["seed"] == int(seed) and reveal["fixtures_hash"] == doc["receipt"]["fixtures_hash"]
    for path in (out, tmp_path / "out" / "result.trace.jsonl", tmp_path / ".brainbench" / "brainbench-ledger.jsonl"):
        assert seed not in path.read_text() and reveal["salt"] not in path.read_text(), path
    assert seed not in proc.stdout + proc.stderr
    # Revealed later: the seed file matches the commitment and regenerates the corpus graded.
    ok = _bench("corpus", "verify-seed", out, seed_file)
    assert ok.returncode == 0 and ok.stdout.startswith(f"ok: seed {seed} matches the commitment"), ok.stderr
    assert _bench("corpus", "verify-seed", out).returncode == 2  # the result alone holds no seed
    forged = tmp_path / "forged.seed.json"
    forged.write_text(json.dumps({**reveal, "seed": int(seed) + 1}))
    bad = _bench("corpus", "verify-seed", out, forged)
    assert bad.returncode == 2 and "do not match the result's commitment" in bad.stderr
    assert "Traceback" not in bad.stderr
    swapped = tmp_path / "swapped.json"
    swapped.write_text(json.dumps({**doc, "receipt": {**doc["receipt"], "fixtures_hash": "0" * 64}}))
    bad = _bench("corpus", "verify-seed", swapped, seed_file)
    assert bad.returncode == 2 and "$.receipt.fixtures_hash" in bad.stderr
    # A seed file is never overwritten.
    again = _bench("run", "--fresh-corpus", seed, "--withhold-seed", "--harness", "openclaw", "--suite", "push",
                   "--quiet", "--project", tmp_path, "--out", out)
    assert again.returncode == 2 and "exists; a seed file is never overwritten" in again.stderr
    assert json.loads(seed_file.read_text()) == reveal


def test_a_random_seed_is_recorded_and_checkable(tmp_path: Path) -> None:
    out = tmp_path / "result.json"
    proc = _bench("run", "--fresh-corpus", "--harness", "codex", "--suite", "know-to-ask", "--fixture",
                  "gen-kta-neg-001", "--quiet", "--project", tmp_path, "--out", out)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    seed = doc["receipt"]["seed"]
    assert doc["_meta"]["fresh_corpus"]["seed"] == seed and 0 <= seed < 2**53
    assert f"fresh corpus: 177 fixtures from seed {seed}" in proc.stderr
    ok = _bench("corpus", "verify-seed", out)
    assert ok.returncode == 0, ok.stderr
    assert doc["receipt"]["fixtures_hash"] in ok.stdout


@pytest.mark.parametrize(("args", "line"), [
    (["--fresh-corpus", "abc"], "brainbench run: --fresh-corpus SEED: 'abc' is not an integer"),
    (["--fresh-corpus", str(2**53)], f"brainbench run: --fresh-corpus SEED: {2**53} is outside 0..{2**53 - 1}"),
    (["--fresh-corpus", "--fixtures", "fixtures"], "brainbench run: --fresh-corpus generates the corpus it grades"),
    (["--withhold-seed"], "brainbench run: --withhold-seed and --seed-file only apply with --fresh-corpus"),
    (["--fresh-corpus", "--seed-file", "s.json"], "brainbench run: --seed-file is where --withhold-seed writes"),
    (["--fresh-corpus=5", "--resume", "r.json"], "brainbench run: --fresh-corpus cannot be combined with --resume"),
    (["--fresh-corpus", "5", "--update-baseline"],
     "brainbench run: --update-baseline with --fresh-corpus needs a FILE"),
])
def test_option_errors_are_one_line(tmp_path: Path, args: list[str], line: str) -> None:
    proc = _bench("run", *args, "--project", tmp_path, cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and proc.stderr.startswith(line), proc.stderr


def test_the_gate_on_fresh_corpora(tmp_path: Path) -> None:
    """Against a baseline of the same seed a fresh corpus gets the full gate (the memoriser regresses);
    against another corpus only the invariants are gated and the verdict is inconclusive, with the
    moves named."""
    table = _memorise(REPO / "fixtures", REPO / "gold", tmp_path / "gold-table.json")
    base = tmp_path / "fresh-main.json"
    common = ("--harness", "claude-code", "--suite", "push", "--quiet", "--project", tmp_path)
    made = _bench("run", "--fresh-corpus", "99", *common, "--update-baseline", base)
    assert made.returncode == 0, made.stderr
    same = _bench("run", "--fresh-corpus", "99", *common, "--compare", base, "--out", tmp_path / "same.json",
                  memorised=table)
    outcome = json.loads((tmp_path / "same.json").read_text())["_meta"]["compare"]
    assert same.returncode == 1 and outcome["verdict"] == "regression" and outcome["mode"] == "same-hash"
    assert {b["metric"] for b in outcome["breaches"]} >= {"gold_failed", "push_recall"}
    other = _bench("run", "--fresh-corpus", "100", *common, "--compare", base, "--out", tmp_path / "other.json",
                   memorised=table)
    outcome = json.loads((tmp_path / "other.json").read_text())["_meta"]["compare"]
    assert other.returncode == 2 and outcome["verdict"] == "inconclusive" and outcome["mode"] == "fresh-corpus"
    assert outcome["breaches"] == []
    assert any(n.startswith("moved adversely, not gated on a fresh corpus: claude-code/push push_recall 1 → 0")
               for n in outcome["notes"]), outcome["notes"]
    assert "## Gate: INCONCLUSIVE (fresh-corpus)" in other.stdout
