"""Hostile listen-mode call servers (a pod's sidecars) in a real ``brainbench run --executor sidecar``.

openclaw and claude-code are honest sidecars (call_server.py processes running our adapters,
as tests/executors/test_sidecar_run.py starts them); codex's is a container under a pids limit
running the same call_server.py with a hostile hook (hostile/sidecar_hook.py), its port
published on loopback.  On its third call the hook either kills its call server and squats
its port, answering every hello "ready" and every call with a forged context, or floods the
container with processes up to its pids limit.  Either way the honest seams' cells and turn
rows must equal a clean run's, and the hostile seam's failure must be its own: the squatter
hears nothing but a nonce (no token, no call) and its forged context is never graded; the
flooded server lives on and says why each call could not start.
"""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from brainbench.executors.sidecar import TcpCallChannel
from container_kit import CLIENT, build, needs_docker

pytestmark = [needs_docker, pytest.mark.timeout(900)]
REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "data" / "reference" / "corpus"
SERVER_PY = REPO / "runner" / "brainbench" / "executors" / "call_server.py"
HOSTILE = Path(__file__).parent / "hostile"
HONEST = ("openclaw", "claude-code")
PORT = 7703


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_ready(port: int, token: str) -> None:
    deadline = time.monotonic() + 60
    while True:
        channel = TcpCallChannel("codex", "127.0.0.1", port)
        try:
            channel.connect(token, timeout_s=5)
            channel.close()
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, str]]]:
    """Honest call servers for every seam (codex's serves the clean run): token dir and endpoints."""
    tokens = tmp_path_factory.mktemp("tokens")
    procs, endpoints = [], {}
    try:
        for seam in (*HONEST, "codex"):
            (tokens / seam).write_text(uuid.uuid4().hex + "\n")
            port = _free_port()
            procs.append(subprocess.Popen(
                [sys.executable, str(SERVER_PY), "--listen", f"127.0.0.1:{port}", "--token-file", str(tokens / seam),
                 "--", sys.executable, "-m", "brainbench.hooks", seam], stderr=subprocess.DEVNULL))
            endpoints[seam] = f"127.0.0.1:{port}"
        for seam, where in endpoints.items():
            _wait_ready(int(where.rsplit(":", 1)[1]), (tokens / seam).read_text().strip())
        yield tokens, endpoints
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


def _run(tmp: Path, name: str, tokens: Path, endpoints: dict[str, str]) -> tuple[int, dict[str, Any], float]:
    base = {k: v for k, v in os.environ.items() if k != "CI"}
    args = [a for seam, where in endpoints.items() for a in ("--seam-endpoint", f"{seam}={where}")]
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures",
                           str(CORPUS / "fixtures"), "--gold", str(CORPUS / "gold"), "--out", str(tmp / f"{name}.json"),
                           "--ledger", str(tmp / "ledger.jsonl"), "--executor", "sidecar", "--seam-tokens", str(tokens),
                           *args], capture_output=True, text=True, timeout=600, check=False, env=base, cwd=tmp)
    assert (tmp / f"{name}.json").exists(), proc.stderr[-3000:]
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads((tmp / f"{name}.json").read_text()), time.monotonic() - started


def _honest(doc: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    cells = [c for c in doc["cells"] if c["harness"] in HONEST]
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"] if r["harness"] in HONEST]
    return cells, rows


@pytest.fixture(scope="module")
def clean(honest: tuple[Path, dict[str, str]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    code, doc, _ = _run(tmp_path_factory.mktemp("clean"), "clean", *honest)
    assert code == 0 and doc["_meta"]["faults"] == []
    return doc


@pytest.fixture
def hostile_codex(request: pytest.FixtureRequest, honest: tuple[Path, dict[str, str]],
                  tmp_path: Path) -> Iterator[tuple[Any, Path, dict[str, str], str]]:
    """codex's sidecar: call_server.py and the hostile hook in a container of their own (pids limit 64)."""
    files = {"call_server.py": SERVER_PY.read_bytes(), "sidecar_hook.py": (HOSTILE / "sidecar_hook.py").read_bytes()}
    image = build("sidecar-hostile", "COPY call_server.py sidecar_hook.py /opt/\nUSER 10001:10001\n", files)
    token = uuid.uuid4().hex
    # The shell stays PID 1 when the server dies, so the container (and a squatter in it) lives on, as
    # another container of the pod would.
    container = CLIENT.containers.run(
        image, ["/bin/sh", "-c", f"python3 /opt/call_server.py --listen 0.0.0.0:{PORT} -- python3 "
                                  "/opt/sidecar_hook.py; sleep 3600"], detach=True, pids_limit=64,
        environment={"BRAINBENCH_CALL_TOKEN": token, "HOSTILE_MODE": request.param, "HOSTILE_PORT": str(PORT),
                     "HOSTILE_AT": "3"}, ports={f"{PORT}/tcp": ("127.0.0.1", None)})
    try:
        container.reload()
        port = int(container.ports[f"{PORT}/tcp"][0]["HostPort"])
        _wait_ready(port, token)
        tokens = tmp_path / "tokens"
        tokens.mkdir()
        for seam in HONEST:
            (tokens / seam).write_bytes((honest[0] / seam).read_bytes())
        (tokens / "codex").write_text(token + "\n")
        yield container, tokens, {**honest[1], "codex": f"127.0.0.1:{port}"}, token
    finally:
        container.remove(force=True)


def _hostile_run(hostile_codex: tuple[Any, Path, dict[str, str], str], clean: dict[str, Any], tmp_path: Path,
                 why: str) -> dict[str, Any]:
    """A run against the hostile codex sidecar, and what every case must show: codex's failures are
    its own (``adapter_crash``, saying ``why``), the honest seams equal the clean run, no hang."""
    _, tokens, endpoints, _ = hostile_codex
    code, doc, elapsed = _run(tmp_path, "hostile", tokens, endpoints)
    assert code == 2 and doc["_meta"]["run"]["complete"] is True
    faults = doc["_meta"]["faults"]
    assert faults and {f["harness"] for f in faults} == {"codex"}, faults
    assert {f["fault_class"] for f in faults} == {"adapter_crash"}, faults
    assert any(why in f["detail"] for f in faults), faults
    assert _honest(doc) == _honest(clean)
    assert elapsed < 300  # no hang
    return doc


@pytest.mark.parametrize("hostile_codex", ["squat"], indirect=True)
def test_a_squatter_on_a_dead_call_servers_port_gets_neither_the_token_nor_a_hearing(
        hostile_codex: tuple[Any, Path, dict[str, str], str], clean: dict[str, Any], tmp_path: Path) -> None:
    doc = _hostile_run(hostile_codex, clean, tmp_path, "died during the run and did not come back")
    container, _, _, token = hostile_codex
    assert not [r for r in doc["turn_rows"] if "forged-slug" in r["injected_slugs"]]
    # The squatter writes a connection's record when the runner hangs up, which may come a moment
    # after the run's result is written.
    deadline = time.monotonic() + 15
    while (log := container.exec_run(["cat", "/tmp/squat.log"])).exit_code != 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    heard = log.output if log.exit_code == 0 else b""
    assert heard, f"the runner never reached the squatter: the case proves nothing ({log.output!r})"
    assert token.encode() not in heard
    records = [json.loads(record)["heard"] for record in heard.splitlines()]  # one per connection
    assert any(records), "the runner never spoke to the squatter: the case proves nothing"
    for record in records:  # the runner's hellos, each a whole line, and not a byte more
        *lines, rest = record.split("\n")
        assert rest == "", record
        for line in lines:
            assert set(json.loads(line)) == {"id", "hello", "nonce"}, line


@pytest.mark.parametrize("hostile_codex", ["flood"], indirect=True)
def test_a_process_flood_under_the_pids_limit_leaves_the_call_server_answering(
        hostile_codex: tuple[Any, Path, dict[str, str], str], clean: dict[str, Any], tmp_path: Path) -> None:
    _hostile_run(hostile_codex, clean, tmp_path, "cannot start hook")
    container, _, endpoints, token = hostile_codex
    # The flood ends (copied in: docker cp needs no pid of the container's) and the server is still there.
    stop = io.BytesIO()
    with tarfile.open(fileobj=stop, mode="w") as tar:
        tar.addfile(tarfile.TarInfo("stop-flood"), io.BytesIO(b""))
    container.put_archive("/tmp", stop.getvalue())
    deadline = time.monotonic() + 30
    while len(container.top()["Processes"]) > 4 and time.monotonic() < deadline:
        time.sleep(0.2)
    channel = TcpCallChannel("codex", "127.0.0.1", int(endpoints["codex"].rsplit(":", 1)[1]))
    channel.connect(token, timeout_s=10)
    try:
        from brainbench.executors.base import HookCall

        outcome = channel.run(HookCall(b"{}", {}, 10), {}, 2.0, "codex")
        assert (outcome.exit_code, outcome.stderr) == (0, b""), outcome
    finally:
        channel.close()
