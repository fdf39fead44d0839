"""``brainbench run --executor sidecar`` through the CLI: each seam a listening call server.

The servers run here as processes (the Python one for two seams, the static one for the
third where this host can build it), as a pod's sidecars run them; the run must grade
exactly like the local executor's on the reference corpus.  A wrong token is refused
before any fixture runs, with one line naming the seam.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from brainbench.executors.docker.static_helper import helper_binary

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "data" / "reference" / "corpus"
SERVER_PY = REPO / "runner" / "brainbench" / "executors" / "call_server.py"
SEAMS = ("openclaw", "claude-code", "codex")

pytestmark = pytest.mark.timeout(600)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_listening(port: int) -> None:
    for _ in range(200):
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.05)
    raise AssertionError(f"no call server listens on {port}")


@pytest.fixture
def sidecars(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """Three listening call servers: the token directory and each seam's endpoint."""
    tokens = tmp_path / "tokens"
    tokens.mkdir()
    static = helper_binary()
    procs, endpoints = [], {}
    try:
        for seam in SEAMS:
            (tokens / seam).write_text(uuid.uuid4().hex + "\n")
            port = _free_port()
            server = [static] if seam == "codex" and static else [sys.executable, str(SERVER_PY)]
            procs.append(subprocess.Popen(
                [*server, "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens / seam), "--",
                 sys.executable, "-m", "brainbench.hooks", seam], stderr=subprocess.DEVNULL))
            endpoints[seam] = f"127.0.0.1:{port}"
        for where in endpoints.values():  # listening, so each has read its token
            _wait_listening(int(where.rsplit(":", 1)[1]))
        yield tokens, endpoints
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _run(tmp_path: Path, name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures",
                           str(CORPUS / "fixtures"), "--gold", str(CORPUS / "gold"), "--out",
                           str(tmp_path / f"{name}.json"), "--ledger", str(tmp_path / "ledger.jsonl"), *args],
                          capture_output=True, text=True, timeout=600, check=False, env={**base, **(env or {})},
                          cwd=tmp_path)


def _graded(path: Path) -> tuple[Any, Any]:
    doc = json.loads(path.read_text())
    return doc["cells"], [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"]]


def test_sidecar_run_grades_like_the_local_run(sidecars: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    tokens, endpoints = sidecars
    # Endpoints through the env var (space-separated, as a pod spec sets it), tokens by flag.
    env = {"BRAINBENCH_SEAM_ENDPOINT": " ".join(f"{s}={e}" for s, e in endpoints.items())}
    side = _run(tmp_path, "sidecar", "--executor", "sidecar", "--seam-tokens", str(tokens), env=env)
    assert side.returncode == 0, side.stderr[-3000:]
    local = _run(tmp_path, "local")
    assert local.returncode == 0, local.stderr[-3000:]
    assert _graded(tmp_path / "sidecar.json") == _graded(tmp_path / "local.json")
    seams = json.loads((tmp_path / "sidecar.json").read_text())["_meta"]["run"]["seams"]
    assert {s["harness"]: (s["executor"], s["mode"]) for s in seams} == {s: ("sidecar", "exec") for s in SEAMS}


def test_a_wrong_token_is_refused_before_anything_runs(sidecars: tuple[Path, dict[str, str]],
                                                      tmp_path: Path) -> None:
    tokens, endpoints = sidecars
    (tokens / "claude-code").write_text("not-the-token\n")
    args = [a for seam, where in endpoints.items() for a in ("--seam-endpoint", f"{seam}={where}")]
    proc = _run(tmp_path, "refused", "--executor", "sidecar", "--seam-tokens", str(tokens), *args)
    assert proc.returncode == 2, proc.stderr[-3000:]
    # Neither side proves a token it lacks: the runner gives up on a server whose proof fails.
    assert "claude-code: the peer at 127.0.0.1:" in proc.stderr, proc.stderr[-3000:]
    assert "cannot prove it holds the seam's token" in proc.stderr, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    run = json.loads((tmp_path / "refused.json").read_text())["_meta"]["run"]
    assert (run["complete"], run["interrupted_by"], run["completed_fixtures"]) == (False, "error", [])
