"""gbrain-evals' category runner (eval/runner/cat34-brainbench-memory.ts) against gbrain-facade/, unchanged.

The runner is gbrain-evals' and not ours to vendor, so this test does what it does, step by step,
with bun (scripts/install-bun; .ci/run installs it):

* it takes a checkout (GBRAIN_REPO) that holds ``src/cli.ts`` and ``evals/brainbench/fixtures``;
* it removes the canonical ``result.json`` of its report directory, spawns ``bun src/cli.ts eval
  brainbench --harness all --suite all --json --out <dir>/result-<nonce>.json`` in the checkout with
  provider keys (``*_API_KEY``, ``*_AUTH_TOKEN``) stripped, and refuses a missing or stale result;
* it checks the contract (``result_schema_version`` 1, receipt types, cells, seed failures), renames
  the nonced result to ``result.json``, records ``package.json``'s version as the SUT's, and reads
  the suites it expects from ``evals/brainbench/schema/fixture.schema.json`` (``suites.items.enum``,
  falling back to the four base suites when that is unreadable);
* it grades: a production cell with failed gold, a suite expected but absent, a seed failure or a
  non-zero exit is an error; anything else scores.

The facade's schema is ``brainbench schema export``'s, so the suites expected are the ones our
fixture model declares (eight since gbrain 0.60's memory-trust vocabulary); a declared suite the
corpus has no fixture for is the one absence allowed here, and only until the corpus has one.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

jsonschema = pytest.importorskip("jsonschema")

REPO = Path(__file__).resolve().parents[2]
FACADE = REPO / "gbrain-facade"
BASE_SUITES = ("know-to-ask", "push", "write-back", "continuity")
# The committed corpus carries the memory-trust suites: gbrain 0.60's result schema is the one to meet.
GBRAIN_RESULT_SCHEMA = REPO / "tests" / "data" / "reference-trust" / "schema-v0.60" / "result.schema.json"


def _bun() -> str:
    named = os.environ.get("BRAINBENCH_BUN")
    if named:
        return named
    found = subprocess.run(["bash", str(REPO / "scripts" / "install-bun"), "--check"], capture_output=True,
                           text=True, check=False)
    if found.returncode != 0:
        # Under CI the runner's runtime is installed by .ci/run: missing, it is a failure, not a skip.
        (pytest.fail if os.environ.get("CI") else pytest.skip)(found.stderr.strip())
    return found.stdout.strip()


def _contract_violations(doc: Any) -> list[str]:
    """What the runner refuses before grading (its ``validateResultDoc``), in our words."""
    if not isinstance(doc, dict):
        return ["not an object"]
    out = []
    receipt = doc.get("receipt")
    if not isinstance(receipt, dict):
        out.append("receipt")
    else:
        out += [f"receipt.{k}" for k, kind in (("fixtures_hash", str), ("harness_sha", str),
                                                ("include_holdout", bool), ("llm", bool))
                if not isinstance(receipt.get(k), kind)]
        if receipt.get("result_schema_version") != 1:
            out.append("result_schema_version")
    cells = doc.get("cells")
    if not isinstance(cells, list) or any(
            not isinstance(c, dict) or not all(isinstance(c.get(k), str) for k in ("harness", "seam", "suite"))
            or not all(isinstance(c.get(k), int) for k in ("gold_total", "gold_failed"))
            or not isinstance(c.get("metrics"), dict) for c in cells):
        out.append("cells")
    failures = doc.get("seed_failures")
    if not isinstance(failures, list) or any(
            not isinstance(f, dict) or not isinstance(f.get("fixture_id"), str) or not isinstance(f.get("error"), str)
            for f in failures):
        out.append("seed_failures")
    return out


def _expected_suites(repo: Path) -> tuple[list[str], str]:
    try:
        schema = json.loads((repo / "evals" / "brainbench" / "schema" / "fixture.schema.json").read_text())
        declared = schema["properties"]["suites"]["items"]["enum"]
        if isinstance(declared, list) and all(isinstance(x, str) for x in declared) \
                and all(b in declared for b in BASE_SUITES):
            return declared, "fixture-schema"
    except (OSError, ValueError, KeyError, TypeError):
        pass
    return list(BASE_SUITES), "default"


def _corpus_suites() -> set[str]:
    return {s for p in (REPO / "fixtures").glob("*.fixture.json") for s in json.loads(p.read_text())["suites"]}


def test_the_runner_drives_the_facade_unchanged(tmp_path: Path) -> None:
    bun = _bun()
    repo = FACADE  # GBRAIN_REPO=<facade>: the runner considers this checkout alone
    assert (repo / "src" / "cli.ts").is_file() and (repo / "evals" / "brainbench" / "fixtures").is_dir()

    report_dir = tmp_path / "eval" / "reports" / "cat34-brainbench-memory"
    report_dir.mkdir(parents=True)
    canonical = report_dir / "result.json"
    started = time.time()
    nonce = f"{int(started * 1000):x}-{os.getpid():x}"
    out = report_dir / f"result-{nonce}.json"
    # The runner's env minus provider keys (and, here, the test session's own BrainBench settings).
    env = {k: v for k, v in os.environ.items() if not re.search(r"(?:_API_KEY|_AUTH_TOKEN)$", k, re.I)
           and not k.startswith("BRAINBENCH_") and k != "CI"}
    proc = subprocess.run([bun, "src/cli.ts", "eval", "brainbench", "--harness", "all", "--suite", "all", "--json",
                           "--out", str(out)], cwd=repo, env=env, capture_output=True, text=True, timeout=900,
                          check=False)

    # Fresh-result gate, then the contract gate.
    assert out.is_file(), f"no fresh result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    assert out.stat().st_mtime >= started - 2
    doc = json.loads(out.read_text())
    assert _contract_violations(doc) == []
    jsonschema.validate(doc, json.loads(GBRAIN_RESULT_SCHEMA.read_text()))
    assert json.loads(proc.stdout) == doc  # --json: the same document, one line, through the facade
    out.rename(canonical)
    # Nothing else piles up in the caller's directory: the trace went to the project's .brainbench/.
    assert sorted(p.name for p in report_dir.iterdir()) == ["result.json"]
    trace = Path(doc["_meta"]["trace"]["path"])
    assert trace.parent == REPO / ".brainbench" / "traces" and trace.name == f"result-{nonce}.trace.jsonl"
    explain = subprocess.run([str(REPO / ".venv" / "bin" / "brainbench"), "explain", str(canonical),
                              "gen-kta-pos-001#1", "--harness", "codex"], capture_output=True, text=True,
                             timeout=120, check=False, env=env)
    assert explain.returncode == 0, explain.stderr  # the renamed result still finds its trace
    trace.unlink()

    # The SUT's version, from package.json: ours, never "unknown".
    version = json.loads((repo / "package.json").read_text()).get("version", "unknown")
    from brainbench import __version__

    assert version == f"{__version__}+brainbench"

    # Grading, as the runner grades.
    expected, source = _expected_suites(repo)
    assert source == "fixture-schema"
    subprocess.run([str(REPO / ".venv" / "bin" / "brainbench"), "schema", "export", str(tmp_path / "s")],
                   capture_output=True, text=True, timeout=120, check=True)
    declared = json.loads((tmp_path / "s" / "fixture.schema.json").read_text())["properties"]["suites"]["items"]
    assert expected == declared["enum"]
    graded = {c["suite"] for c in doc["cells"]}
    missing = [s for s in expected if s not in graded]
    # A suite the corpus has fixtures for is graded; the only absences are suites it has none of yet.
    assert not set(missing) & _corpus_suites(), missing
    assert set(BASE_SUITES) <= graded
    errors = [f"{c['harness']}/{c['suite']}" for c in doc["cells"]
              if c["gold_total"] <= 0 or (c["seam"] == "production" and c["gold_failed"] > 0)]
    errors += [f"suite:{s}" for s in missing] + [f"seed:{f['fixture_id']}" for f in doc["seed_failures"]]
    assert proc.returncode == 0, proc.stderr[-2000:]
    # Under gbrain 0.60's behaviour (the default) openclaw's volunteer arm fills the 4-entity push turns
    # its 3-pointer budget missed under v0.46: no production cell fails, so the runner sees no SUT error
    # (codex, the one failing cell, is an adapter seam: docs/SCOREBOARD.md).
    assert [e for e in errors if not e.startswith("suite:")] == []


def test_the_facade_schema_is_the_export(tmp_path: Path) -> None:
    """Generated, never copied: regenerate with `brainbench schema export gbrain-facade/evals/brainbench/schema`."""
    fresh = tmp_path / "schema"
    proc = subprocess.run([str(REPO / ".venv" / "bin" / "brainbench"), "schema", "export", str(fresh)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    committed = FACADE / "evals" / "brainbench" / "schema"
    assert sorted(p.name for p in committed.iterdir()) == sorted(p.name for p in fresh.iterdir())
    for path in fresh.iterdir():
        assert (committed / path.name).read_text() == path.read_text(), (
            f"{committed / path.name} is stale: brainbench schema export {committed}")


def test_a_failing_cli_is_the_callers_exit_code(tmp_path: Path) -> None:
    bun = _bun()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_")}
    proc = subprocess.run([bun, "src/cli.ts", "eval", "brainbench", "--harness", "nobody"], cwd=FACADE, env=env,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2 and "--harness: unknown value(s) nobody" in proc.stderr
    absent = subprocess.run([bun, "src/cli.ts", "--version"], cwd=FACADE,
                            env={**env, "BRAINBENCH_CLI": str(tmp_path / "no-such-brainbench")},
                            capture_output=True, text=True, timeout=120, check=False)
    assert absent.returncode == 2 and "gbrain-facade: cannot run" in absent.stderr
