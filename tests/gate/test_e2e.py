"""The gate end to end: real ``brainbench run`` on a real corpus in a temporary git repo.

Each scenario of issue 5 goes through ``brainbench gate`` (main's baseline from the
``main`` branch, the working tree's as committed baseline) exactly as CI runs it.
The corpus is two of gbrain's hand-authored fixtures (kta-001, ms-001) replayed
through the codex seam only, to keep every run short.  A "seam change" swaps the
codex seam's command (``--seams`` file: ``[seams.codex] command = …, mode = "exec"``)
for a wrapper that drops or adds one pointer.

The reference fixtures are the repo's own copy (``tests/data/reference``), so nothing
here skips.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
REFERENCE_CORPUS = REPO_ROOT / "tests" / "data" / "reference" / "corpus"
CORPUS_IDS = ("kta-001-deal-recall", "ms-001-two-source-alias")
LOST_ITEM = "kta-001-deal-recall#4"  # "…intro email to Charlie Example…"
# A generous hook timeout: the wrapper hooks start two interpreters per call, and a
# timed-out hook is a fault (exit 2) that would mask the verdict under a loaded machine.
RUN_FLAGS = ("--harness", "codex", "--suite", "know-to-ask", "--jobs", "1", "--timeout", "120")
BRAINBENCH = [sys.executable, "-c", "import sys; from brainbench.cli import main; sys.exit(main())"]

pytestmark = pytest.mark.timeout(900)

HOOK = r'''
import json, subprocess, sys
raw = sys.stdin.read()
try:
    msg = json.loads(raw)
except ValueError:
    msg = {}
prompt = msg.get("prompt") or "" if isinstance(msg, dict) else ""
if msg.get("hook_event_name") == "UserPromptSubmit" and MODE == "drop" and "Charlie" in prompt:
    sys.exit(0)  # the worse seam: silent on one retrieve turn
if msg.get("hook_event_name") == "UserPromptSubmit" and MODE == "leak" and "Acme" in prompt:
    block = ("## Brain pages mentioned this turn\n"
             "- **Acme Example** → `companies/acme-example` — Team-brain-only company page.")
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": block}}))
    sys.exit(0)
proc = subprocess.run([sys.executable, "-m", "brainbench.hooks.codex"], input=raw, text=True, capture_output=True)
sys.stdout.write(proc.stdout)
sys.stderr.write(proc.stderr)
sys.exit(proc.returncode)
'''


def _env(**extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("CI", None)  # our own CI sets CI=true; the gate refuses --allow-regression under it
    env.pop("BRAINBENCH_MAIN_REF", None)
    env.update(extra)
    return env


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


def _corpus_args(repo: Path) -> list[str]:
    return ["--fixtures", str(repo / "fixtures"), "--gold", str(repo / "gold"), *RUN_FLAGS]


def _bench(repo: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*BRAINBENCH, *args], cwd=repo, env=env or _env(), capture_output=True, text=True,
                          check=False)


def _update_baseline(repo: Path, *extra: str) -> None:
    proc = _bench(repo, "run", *_corpus_args(repo), "--update-baseline", str(repo / "baselines" / "main.json"),
                  "--committed-baseline", str(repo / "no-such-baseline.json"), *extra)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _gate(repo: Path, *extra: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    out = repo.parent / f"{repo.name}-result.json"
    return subprocess.run(
        [*BRAINBENCH, "gate", "--main-ref", "main", "--out", str(out),
         *_corpus_args(repo), *extra],
        cwd=repo, env=env or _env(), capture_output=True, text=True, check=False,
    )


def _hook(tmp: Path, mode: str) -> list[str]:
    """``--seams`` arguments that put a wrapper hook behind the codex seam."""
    hook = tmp / f"hook-{mode}.py"
    hook.write_text(f"MODE = {mode!r}\n" + HOOK)
    seams = tmp / f"seams-{mode}.toml"
    seams.write_text(f"[seams.codex]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(hook))}]\n"
                     'mode = "exec"\n')
    return ["--seams", str(seams)]


@pytest.fixture(scope="module")
def base_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A git repo whose main branch carries the corpus and its receipts-backed baseline."""
    repo = tmp_path_factory.mktemp("e2e") / "base"
    for sub in ("fixtures", "gold"):
        (repo / sub).mkdir(parents=True)
    for fid in CORPUS_IDS:
        shutil.copy(REFERENCE_CORPUS / "fixtures" / f"{fid}.fixture.json", repo / "fixtures")
        shutil.copy(REFERENCE_CORPUS / "gold" / f"{fid}.gold.json", repo / "gold")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "e2e@example.com")
    _git(repo, "config", "user.name", "e2e")
    _update_baseline(repo)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "corpus and baseline")
    return repo


@pytest.fixture
def repo(base_repo: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "repo"
    shutil.copytree(base_repo, copy)
    return copy


def _edit_fixture(repo: Path, old: str, new: str) -> None:
    path = repo / "fixtures" / "kta-001-deal-recall.fixture.json"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new))


def test_baseline_is_byte_stable_and_schema_valid(repo: Path) -> None:
    path = repo / "baselines" / "main.json"
    first = path.read_bytes()
    _update_baseline(repo)
    assert path.read_bytes() == first
    doc = json.loads(first)
    assert doc["config"] == {"include_holdout": False, "llm": False, "harnesses": ["codex"],
                             "suites": ["know-to-ask"]}
    jsonschema = pytest.importorskip("jsonschema")
    schema_path = REPO_ROOT / "tests" / "data" / "reference" / "schema" / "baseline.schema.json"
    jsonschema.validate(doc, json.loads(schema_path.read_text()))  # the schema is committed: always validated


def test_unchanged_passes(repo: Path) -> None:
    proc = _gate(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "## Gate: PASS (same-hash)" in proc.stdout


def test_seam_change_losing_one_gold_item_fails_naming_it(repo: Path, tmp_path: Path) -> None:
    proc = _gate(repo, *_hook(tmp_path, "drop"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "## Gate: REGRESSION (same-hash)" in proc.stdout
    assert "1 newly-failed gold item(s)" in proc.stdout
    assert LOST_ITEM in proc.stdout


def test_gold_total_change_under_same_hash_fails(repo: Path) -> None:
    # main's baseline claims a different scoring coverage for the same corpus.
    path = repo / "baselines" / "main.json"
    doc = json.loads(path.read_text())
    doc["counts"]["codex/know-to-ask"]["gold_total"] += 1
    path.write_text(json.dumps(doc, indent=2) + "\n")
    _git(repo, "commit", "-qam", "doctored coverage")
    proc = _gate(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "WITHOUT a fixture change" in proc.stdout


def test_fixture_edit_without_baseline_update_is_inconclusive(repo: Path) -> None:
    _edit_fixture(repo, "Thanks, that helps a lot.", "Thanks, that helps a ton.")
    proc = _gate(repo)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "corpus-bless" in proc.stdout
    assert "does not match this run" in proc.stdout


def test_updated_baseline_with_adverse_move_needs_justification(repo: Path) -> None:
    # Turn 4 no longer names Charlie: a retrieve turn the reflex cannot hit any more.
    _edit_fixture(repo, "intro email to Charlie Example about it", "intro email to him about it")
    _update_baseline(repo)
    proc = _gate(repo)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "know_to_ask_failure_rate" in proc.stdout and "justification" in proc.stdout

    _update_baseline(repo, "--justification", "turn 4 is now an anaphora probe")
    proc = _gate(repo)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "regression blessed: turn 4 is now an anaphora probe" in proc.stdout


def test_config_mismatch_is_inconclusive(repo: Path) -> None:
    proc = _gate(repo, "--include-holdout")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "run config mismatch" in proc.stdout


def test_isolation_violation_fails_even_with_matching_baseline(repo: Path, tmp_path: Path) -> None:
    leak = _hook(tmp_path, "leak")
    _update_baseline(repo, *leak)
    _git(repo, "commit", "-qam", "baseline recorded with the leak")
    proc = _gate(repo, *leak)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "source_isolation_violations" in proc.stdout and "data-leak invariant" in proc.stdout


def test_allow_regression_refused_under_ci(repo: Path) -> None:
    proc = _gate(repo, "--allow-regression", "just this once", env=_env(CI="true"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "refused when CI is set" in proc.stderr


def test_allow_regression_allowed_locally(repo: Path, tmp_path: Path) -> None:
    proc = _gate(repo, "--allow-regression", "e2e test bless", *_hook(tmp_path, "drop"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "regression allowed: e2e test bless" in proc.stdout


def test_compare_files_mode(repo: Path, tmp_path: Path) -> None:
    base = repo / "baselines" / "main.json"
    proc = _bench(repo, "run", "--compare", str(base), str(base))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["verdict"] == "pass"
    doctored = tmp_path / "doctored.json"
    doc = json.loads(base.read_text())
    doc["counts"]["codex/know-to-ask"]["gold_failed"] += 1
    doctored.write_text(json.dumps(doc))
    proc = _bench(repo, "run", "--compare", str(base), str(doctored))
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["breaches"]


def test_delta_from_gate_output(repo: Path, tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    proc = _gate(repo, "--delta", str(summary))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = summary.read_text()
    assert "## BrainBench: PASS" in text and "| codex | contract | know-to-ask |" in text
