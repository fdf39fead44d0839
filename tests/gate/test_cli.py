"""``brainbench gate`` / ``brainbench delta`` as subprocesses.

The runner is replaced by a recording stub (``BRAINBENCH_GATE_RUN_COMMAND``) so
these tests pin the gate's own logic -- which ref it reads, what it refuses, what
it passes to ``run`` -- independently of the corpus; ``test_e2e.py`` drives the
real ``brainbench run``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from brainbench.gate.baseline import canonical_baseline, write_baseline

from ._builders import make_result

GATE = [sys.executable, "-m", "brainbench.gate.cli"]

STUB = r'''
import json, os, sys
args = sys.argv[1:]
with open(os.environ["STUB_LOG"], "a") as fh:
    fh.write(json.dumps(args) + "\n")
out = args[args.index("--out") + 1]
with open(out, "w") as fh:
    fh.write(os.environ["STUB_RESULT"])
sys.exit(int(os.environ.get("STUB_EXIT", "0")))
'''


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _result_json() -> str:
    return json.dumps(make_result().to_json_dict())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "config", "user.email", "t@example.com")
    _git(repo, "config", "user.name", "t")
    (repo / "README").write_text("x\n")
    _git(repo, "add", "README")
    _git(repo, "commit", "-qm", "init")
    return repo


def _commit_baseline(repo: Path) -> Path:
    path = repo / "baselines" / "main.json"
    write_baseline(canonical_baseline(make_result(), harnesses=["openclaw"], suites=["know-to-ask", "push"]), path)
    _git(repo, "add", "baselines/main.json")
    _git(repo, "commit", "-qm", "baseline")
    return path


def _run_gate(
    repo: Path, tmp_path: Path, *args: str, exit_code: int = 0
) -> tuple[subprocess.CompletedProcess[str], list]:
    stub = tmp_path / "stub.py"
    stub.write_text(STUB)
    log = tmp_path / "log.jsonl"
    env = dict(os.environ, BRAINBENCH_GATE_RUN_COMMAND=f"{sys.executable} {stub}", STUB_LOG=str(log),
               STUB_RESULT=_result_json(), STUB_EXIT=str(exit_code))
    env.pop("BRAINBENCH_MAIN_REF", None)
    proc = subprocess.run([*GATE, "gate", *args], cwd=repo, env=env, capture_output=True, text=True, check=False)
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    return proc, calls


def test_gate_compares_against_mains_copy(repo: Path, tmp_path: Path) -> None:
    wt = _commit_baseline(repo)
    wt.write_text(wt.read_text().replace('"gold_failed": 9', '"gold_failed": 0'))  # PR edits its copy
    delta = tmp_path / "summary.md"
    proc, [call] = _run_gate(repo, tmp_path, "--delta", str(delta), "--fixtures", "F")
    assert proc.returncode == 0, proc.stderr
    main_copy = Path(call[call.index("--compare") + 1])
    assert call[call.index("--committed-baseline") + 1] == str(wt)
    assert call[-2:] == ["--fixtures", "F"]  # extra args reach `run`
    assert not main_copy.exists()  # temp copy cleaned up
    assert "## BrainBench: NO GATE (initial landing)" in delta.read_text()  # stub result has no compare block


def test_gate_passes_exit_code_through(repo: Path, tmp_path: Path) -> None:
    _commit_baseline(repo)
    proc, _ = _run_gate(repo, tmp_path, exit_code=1)
    assert proc.returncode == 1


def test_gate_refuses_deleted_baseline(repo: Path, tmp_path: Path) -> None:
    wt = _commit_baseline(repo)
    wt.unlink()
    proc, calls = _run_gate(repo, tmp_path)
    assert proc.returncode == 2
    assert "deleted in this tree" in proc.stderr
    assert calls == []


def test_gate_first_landing_uses_worktree_baseline(repo: Path, tmp_path: Path) -> None:
    path = repo / "baselines" / "main.json"
    write_baseline(canonical_baseline(make_result(), harnesses=["openclaw"], suites=["push"]), path)
    proc, [call] = _run_gate(repo, tmp_path)
    assert proc.returncode == 0
    assert call[call.index("--compare") + 1] == str(path)
    assert "first landing" in proc.stderr


def test_gate_ungated_without_any_baseline(repo: Path, tmp_path: Path) -> None:
    out = tmp_path / "res.json"
    proc, [call] = _run_gate(repo, tmp_path, "--out", str(out))
    assert proc.returncode == 0
    assert "--compare" not in call and call[call.index("--out") + 1] == str(out)
    assert out.is_file()


def test_gate_prefers_origin_main_and_honours_main_ref(repo: Path, tmp_path: Path) -> None:
    _commit_baseline(repo)
    _git(repo, "update-ref", "refs/remotes/origin/main", "HEAD~1")  # origin/main predates the baseline
    proc, [call] = _run_gate(repo, tmp_path)
    assert "--compare" in call and "first landing" in proc.stderr
    proc, _ = _run_gate(repo, tmp_path, "--main-ref", "main")
    assert "first landing" not in proc.stderr


def test_gate_unknown_ref(repo: Path, tmp_path: Path) -> None:
    proc, calls = _run_gate(repo, tmp_path, "--main-ref", "nope")
    assert proc.returncode == 2 and "does not resolve" in proc.stderr and calls == []


def test_gate_outside_git(tmp_path: Path) -> None:
    proc, _ = _run_gate(tmp_path, tmp_path)
    assert proc.returncode == 2 and "not inside a git repository" in proc.stderr


def test_delta_cli(tmp_path: Path) -> None:
    head = tmp_path / "head.json"
    head.write_text(_result_json())
    main = tmp_path / "main.json"
    write_baseline(canonical_baseline(make_result(), harnesses=["openclaw"], suites=["push"]), main)
    proc = subprocess.run([*GATE, "delta", str(head)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0
    assert "## BrainBench:" in proc.stdout
    assert "| openclaw | production |" in proc.stdout and "know_to_ask_failure_rate=" in proc.stdout
    proc = subprocess.run([*GATE, "delta", str(main), str(head)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0 and "9/96 (=)" in proc.stdout


def test_delta_cli_usage_errors(tmp_path: Path) -> None:
    assert subprocess.run([*GATE, "delta"], capture_output=True, check=False).returncode == 2
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    proc = subprocess.run([*GATE, "delta", str(bad)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2 and "brainbench delta:" in proc.stderr


def test_gate_cli_imports_stay_lazy() -> None:
    code = ("import sys, brainbench.gate.cli; "
            "heavy = [m for m in ('pydantic', 'psycopg', 'brainbench.models.result') if m in sys.modules]; "
            "print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_ci_gate_script(repo: Path, tmp_path: Path) -> None:
    """scripts/ci-gate.sh forwards env to `brainbench gate` and writes the step summary."""
    script = Path(__file__).resolve().parents[2] / "scripts" / "ci-gate.sh"
    _commit_baseline(repo)
    stub = tmp_path / "stub.py"
    stub.write_text(STUB)
    summary, out = tmp_path / "summary.md", tmp_path / "out.json"
    env = dict(os.environ, BRAINBENCH_GATE_RUN_COMMAND=f"{sys.executable} {stub}", STUB_LOG=str(tmp_path / "l"),
               STUB_RESULT=_result_json(), STUB_EXIT="1", GITHUB_STEP_SUMMARY=str(summary),
               BRAINBENCH_OUT=str(out), BRAINBENCH_MAIN_REF="main",
               BRAINBENCH=f"{sys.executable} -m brainbench.gate.cli")
    proc = subprocess.run(["bash", str(script)], cwd=repo, env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 1, proc.stderr
    assert out.is_file()
    assert "## BrainBench:" in summary.read_text()
