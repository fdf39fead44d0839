"""Database errors are database errors: one line naming the cause, exit 2, partial result, nothing left.

A hook program (a real local process, running as the runner's uid as local mode
allows) sabotages the embedded server on its fifth call: it kills the postmaster, or
deletes the cluster's whole directory.  The run must stop with one clear line, write
the fixtures that finished, remove its scratch and stop the server; never print
"internal error … this is a bug".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from reference_corpus import copy_reference_corpus

FIXTURES = ("kta-001-deal-recall", "kta-002-quiet-smalltalk", "ms-001-two-source-alias",
            "ms-002-nondefault-active", "wb-001-pricing-concern")

SABOTAGE = r'''
import json, os, shutil, signal, sys, urllib.parse
sys.stdin.read()
count_file, action = sys.argv[1], sys.argv[2]
n = int(open(count_file).read()) + 1 if os.path.exists(count_file) else 1
open(count_file, "w").write(str(n))
if n == 5:
    url = urllib.parse.urlsplit(os.environ["BRAINBENCH_DATABASE_URL"])
    socket_dir = dict(urllib.parse.parse_qsl(url.query))["host"]
    root = socket_dir if os.path.exists(os.path.join(socket_dir, "data")) else os.path.dirname(socket_dir)
    pid = int(open(os.path.join(root, "data", "postmaster.pid")).readline())
    open(count_file + ".root", "w").write(root)
    if action == "kill":
        os.kill(pid, signal.SIGKILL)
    else:
        shutil.rmtree(os.path.join(root, "data"))
print(json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": ""}}))
'''


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.mark.parametrize("action", ["kill", "remove-directory"])
def test_a_dying_embedded_server_is_one_clear_line_with_a_partial_result(reference: Path, tmp_path: Path,
                                                                         action: str) -> None:
    fixtures, gold = copy_reference_corpus(reference, tmp_path / "corpus", FIXTURES)
    hook = tmp_path / "sabotage.py"
    hook.write_text(SABOTAGE)
    counter = tmp_path / "calls"
    # Not under pytest's basetemp: a concurrent pytest session re-closes that to 0700, and the
    # server (its own uid since this change) could no longer traverse to its directory.
    scratch = Path(tempfile.mkdtemp(prefix="bbtest-sec-scratch-"))
    try:
        _sabotaged_run(fixtures, gold, hook, counter, scratch, tmp_path, action)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _sabotaged_run(fixtures: Path, gold: Path, hook: Path, counter: Path, scratch: Path, tmp_path: Path,
                   action: str) -> None:
    out = tmp_path / "result.json"
    env = {**os.environ, "BRAINBENCH_SCRATCH_DIR": str(scratch),
           "BRAINBENCH_SEAM_COMMAND_CODEX": f"{sys.executable} {hook} {counter} {action}"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(fixtures), "--gold",
                           str(gold), "--jobs", "1", "--quiet", "--timeout", "10", "--out", str(out)],
                          capture_output=True, text=True, env=env, timeout=240, check=False)
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])
    # Besides the run's one-line choice of jobs (brain/budget.py), one line: the failure.
    lines = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("jobs: ")]
    assert len(lines) == 1, lines
    assert lines[0].startswith("run failed: the brain database failed: "), lines
    assert "bug" not in lines[0] and "Traceback" not in proc.stderr
    expected = "died" if action == "kill" else "was removed"
    assert expected in lines[0], lines[0]
    result = json.loads(out.read_text())
    run = result["_meta"]["run"]
    assert run["complete"] is False and run["interrupted_by"] == "error"
    assert run["completed_fixtures"] and len(run["completed_fixtures"]) < len(FIXTURES)
    # Scratch removed, server stopped: nothing of the run is left (bar this process's owner lock).
    left = [p.name for p in scratch.iterdir() if not p.name.startswith("brainbench-owner-")]
    assert left == [], left
    root = Path((tmp_path / "calls.root").read_text())
    assert not root.exists()
    postmasters = subprocess.run(["pgrep", "-f", f"postgres -D {root}"], capture_output=True, text=True)
    assert postmasters.stdout.strip() == "" or not any(_pid_alive(int(p)) for p in postmasters.stdout.split())
