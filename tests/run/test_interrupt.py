"""SIGINT/SIGTERM mid-run: a partial result marked incomplete, nothing left behind, --resume finishes it."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from brainbench.scratch import scratch_candidates
from test_cli_contract import small_corpus, strip_volatile  # type: ignore[import-not-found]

ALL = ("kta-001-deal-recall", "kta-002-quiet-smalltalk", "ms-001-two-source-alias", "ms-002-nondefault-active",
       "wb-001-pricing-concern", "cont-001-widget-pass-writer", "cont-001-widget-pass-reader")


def _start(fx: Path, gd: Path, out: Path, *extra: str) -> subprocess.Popen[str]:
    # exec mode with in-process hook calls (no warm hook server) and one job make the run
    # slow enough to interrupt in the middle.  Not --quiet: its progress lines say when to signal.
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "BRAINBENCH_HOOK_SERVE": "0"}
    return subprocess.Popen([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                             "--out", str(out), "--mode", "exec", "--jobs", "1", *extra],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _signal_after_first_fixture(proc: subprocess.Popen[str], signum: int) -> str:
    """Send ``signum`` once the run reports its first replayed fixture — an event of the run, not a
    number of seconds, so a slow machine signals as far into the run as a fast one.  Returns the
    stderr read so far."""
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if re.search(r"replayed [1-9]\d*/\d+ fixtures", line):
            proc.send_signal(signum)
            return "".join(seen)
    raise AssertionError(f"the run ended before replaying a fixture: {''.join(seen)}")


def _leftovers(pid: int) -> list[str]:
    found = []
    for root in (r for base in scratch_candidates() for r in base.glob("brainbench-*")):
        marker = root / "runner.pid"
        if marker.exists() and marker.read_text().strip() == str(pid):
            found.append(str(root))
    out = subprocess.run(["ps", "-eo", "pid,ppid,args"], capture_output=True, text=True, check=True).stdout
    found += [line for line in out.splitlines() if "brainbench.hooks" in line and f" {pid} " in f" {line} "]
    return found


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_writes_partial_result_and_cleans_up(reference: Path, tmp_path: Path, signum: int,
                                                    code: int) -> None:
    fx, gd = small_corpus(reference, tmp_path, ALL)
    out = tmp_path / "partial.json"
    proc = _start(fx, gd, out)
    early = _signal_after_first_fixture(proc, signum)
    stdout, stderr = proc.communicate(timeout=120)
    stderr = early + stderr
    assert proc.returncode == code, stderr
    doc = json.loads(out.read_text())
    run = doc["_meta"]["run"]
    assert run["complete"] is False and run["interrupted_by"] == signal.Signals(signum).name
    assert len(run["completed_fixtures"]) < len(ALL) - 1
    assert "INCOMPLETE RUN" in stdout
    assert _leftovers(proc.pid) == []


def test_resume_finishes_an_interrupted_run(reference: Path, tmp_path: Path) -> None:
    fx, gd = small_corpus(reference, tmp_path, ALL)
    out = tmp_path / "partial.json"
    proc = _start(fx, gd, out)
    _signal_after_first_fixture(proc, signal.SIGINT)
    proc.communicate(timeout=120)
    partial = json.loads(out.read_text())
    assert partial["_meta"]["run"]["complete"] is False
    resumed = tmp_path / "resumed.json"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    done = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                           "--out", str(resumed), "--resume", str(out), "--quiet"], capture_output=True, text=True,
                          env=env, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    fresh = tmp_path / "fresh.json"
    subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                    "--out", str(fresh), "--quiet"], capture_output=True, text=True, env=env, timeout=600, check=True)
    assert strip_volatile(json.loads(resumed.read_text())) == strip_volatile(json.loads(fresh.read_text()))
    # A different config refuses to resume.
    refused = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fx), "--gold", str(gd),
                              "--harness", "codex", "--resume", str(out)], capture_output=True, text=True, env=env,
                             timeout=120, check=False)
    assert refused.returncode == 2 and "refusing" in refused.stderr
