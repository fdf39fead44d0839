"""The call server's listen mode (a pod's sidecar): only its seam's token gets in, one client at a time.

Every container of a pod shares the loopback network, so a hook of another seam can
connect to this server, or bind its port once it is gone: each side must prove it holds the
token without sending it (HMAC over a nonce from each side, the server first), so neither a
stranger at the server nor one on its port learns anything; a flood of connections that never
authenticate cannot lock the runner out, and the token never reaches a hook's environment.
Both servers (call_server.py and the static call_server.c) must behave the same.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from brainbench.executors.base import HookCall
from brainbench.executors.call_protocol import CallServerError
from brainbench.executors.call_server import CLIENT_ROLE, HELLO_TIMEOUT_S, MAX_PENDING, SERVER_ROLE, proof
from brainbench.executors.docker.static_helper import helper_binary
from brainbench.executors.sidecar import TcpCallChannel
from processes import live_processes  # type: ignore[import-not-found]

SERVER_PY = Path(__file__).parents[2] / "runner" / "brainbench" / "executors" / "call_server.py"
# Prints its environment's BRAINBENCH_* names and stays alive for a while if asked to.
HOOK = ("import os, sys, time; data = sys.stdin.read(); "
        "print(sorted(k for k in os.environ if k.startswith('BRAINBENCH_'))); "
        "time.sleep(float(data or 0))")
VARIANTS = [pytest.param("python", id="python"),
            pytest.param("static", id="static", marks=pytest.mark.skipif(
                helper_binary() is None, reason="this host cannot build the static call server (cc -static)"))]


@pytest.fixture(params=VARIANTS)
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[int, str, str]]:
    token = uuid.uuid4().hex
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    cmd = [str(helper_binary())] if request.param == "static" else [sys.executable, str(SERVER_PY)]
    marker = f"bbtest-listen-{uuid.uuid4().hex[:8]}"
    # The token from the environment here: the path a hook could most easily inherit.
    proc = subprocess.Popen([*cmd, "--listen", f"127.0.0.1:{port}", "--", sys.executable, "-c", HOOK, marker],
                            env={**{k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_")},
                                 "BRAINBENCH_CALL_TOKEN": token}, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield port, token, marker
    finally:
        proc.kill()
        proc.wait()


def _hello(port: int, line: bytes) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(line)
        answer = conn.makefile("rb").readline()
        return json.loads(answer) if answer else {}


def _handshake(conn: socket.socket, token: str, auth: str | None = None) -> dict[str, object]:
    """The client's side by hand: the server's proof is checked, then ours (or ``auth``) is sent."""
    reader = conn.makefile("rb")
    nonce = secrets.token_hex(16)
    conn.sendall(json.dumps({"id": 0, "hello": True, "nonce": nonce}).encode() + b"\n")
    challenge = json.loads(reader.readline())
    assert challenge["proof"] == proof(token.encode(), SERVER_ROLE, nonce, challenge["challenge"]), challenge
    mine = auth if auth is not None else proof(token.encode(), CLIENT_ROLE, nonce, challenge["challenge"])
    conn.sendall(json.dumps({"id": 1, "auth": mine}).encode() + b"\n")
    answer = reader.readline()
    return json.loads(answer) if answer else {}


def _ready(port: int, token: str) -> dict[str, object]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        return _handshake(conn, token)


def _cmdlines(marker: str) -> dict[int, str]:
    """Live processes whose argv holds ``marker``: the server (its argv ends with the hook's) and its hooks."""
    return {pid: cmdline for pid, cmdline in live_processes().items() if marker in cmdline}


def _running(marker: str) -> int:
    return len(_cmdlines(marker))


def _hooks(marker: str) -> list[int]:
    return [pid for pid, cmdline in _cmdlines(marker).items() if "--listen" not in cmdline]


def test_only_a_proof_of_the_seams_token_gets_in(server: tuple[int, str, str]) -> None:
    port, token, _ = server
    # The token itself, as the runner used to send it, opens nothing any more; nor does anything else.
    for line in (json.dumps({"id": 0, "hello": True, "token": token}).encode() + b"\n",
                 b'{"id": 0, "hello": true, "nonce": "short"}\n', b'{"id": 0, "hello": true, "nonce": "%s"}\n'
                 % ("g" * 32).encode(), b'{"id": 0, "hello": true}\n', b'{"id": 1, "stdin": "", "timeout_s": 5}\n',
                 b"not json\n", b"\n"):
        assert _hello(port, line).get("error") == "unauthorized", line
    for wrong in ("0" * 64, proof(b"guess", CLIENT_ROLE, "0" * 32, "0" * 32), "\u00e9" * 64):
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            assert _handshake(conn, token, auth=wrong).get("error") == "unauthorized", wrong
    assert _ready(port, token).get("ready") is True


class _Squatter:
    """What another seam's hook could put on a dead call server's port: it records what it is told."""

    def __init__(self, answer: bytes | None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.heard = b""
        self.answer = answer
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.sock.accept()
                with conn:
                    conn.settimeout(5)
                    with contextlib.suppress(OSError):
                        while b"\n" not in (chunk := conn.recv(4096)) and chunk:
                            self.heard += chunk
                        self.heard += chunk
                        if self.answer is not None:
                            conn.sendall(self.answer)
                        while chunk := conn.recv(4096):  # all the runner says next
                            self.heard += chunk


@pytest.mark.parametrize("answer", [
    pytest.param(b'{"id": 1, "ready": true, "pid": 1}\n', id="says-ready"),
    pytest.param(b'{"id": 1, "challenge": "%s", "proof": "%s"}\n' % (b"a" * 32, b"0" * 64), id="forged-proof"),
    pytest.param(b'{"id": 1, "ready": true}\n{"id": 2, "exit_code": 0, "stdout": "forged", "stderr": ""}\n',
                 id="forged-answers")])
def test_a_peer_that_cannot_prove_the_token_hears_only_a_nonce(answer: bytes) -> None:
    token = uuid.uuid4().hex
    squatter = _Squatter(answer)
    try:
        with pytest.raises(CallServerError, match="is not codex's call server: it cannot prove it holds the seam's"):
            TcpCallChannel("codex", "127.0.0.1", squatter.port).connect(token, timeout_s=5)
        time.sleep(0.2)
        (line,) = squatter.heard.splitlines()
        assert set(json.loads(line)) == {"id", "hello", "nonce"}
        assert token.encode() not in squatter.heard and b"auth" not in squatter.heard
    finally:
        squatter.sock.close()


def test_a_flood_of_idle_connections_cannot_lock_the_runner_out(server: tuple[int, str, str]) -> None:
    port, token, _ = server
    idle = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(3 * MAX_PENDING)]
    try:
        started = time.monotonic()
        channel = TcpCallChannel("codex", "127.0.0.1", port)
        channel.connect(token, timeout_s=10)
        assert time.monotonic() - started < HELLO_TIMEOUT_S  # served at once, beside the flood
        channel.close()
        # Only MAX_PENDING may wait: the earliest were cut off at once, not at their deadline.
        idle[0].settimeout(HELLO_TIMEOUT_S / 2)
        assert idle[0].recv(1) == b""
    finally:
        for conn in idle:
            conn.close()


def test_one_client_at_a_time_and_a_hang_up_kills_its_calls(server: tuple[int, str, str]) -> None:
    port, token, marker = server
    first = TcpCallChannel("codex", "127.0.0.1", port)
    first.connect(token, timeout_s=10)
    try:
        busy = _ready(port, token)
        assert str(busy.get("error", "")).startswith("busy"), busy
        outcome = first.run(HookCall(b"0", {"BRAINBENCH_DATABASE_URL": "x"}, 10), {"BRAINBENCH_DATABASE_URL": "x"},
                            2.0, "codex")
        # The hook sees what the call gives it, never the server's token.
        assert outcome.exit_code == 0 and outcome.stdout == b"['BRAINBENCH_DATABASE_URL']\n", outcome
        server_itself = _running(marker)  # the hook's argv is part of the server's

        def long_call() -> None:
            with contextlib.suppress(CallServerError):  # the hang-up below ends it
                first.run(HookCall(b"60", {}, 90), {}, 2.0, "codex")

        threading.Thread(target=long_call, daemon=True).start()
        for _ in range(100):
            if _running(marker) > server_itself:
                break
            time.sleep(0.05)
        assert _running(marker) == server_itself + 1
    finally:
        first.close()
    for _ in range(100):  # hung up: its call is killed and the next client is served
        if _running(marker) == server_itself:
            break
        time.sleep(0.05)
    assert _running(marker) == server_itself
    second = TcpCallChannel("codex", "127.0.0.1", port)
    second.connect(token, timeout_s=10)
    second.close()


def test_a_client_waits_out_busy_for_a_while_then_is_refused(server: tuple[int, str, str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Busy right after a hang-up is a moment (the reconnect above relies on waiting it out);
    a server that stays busy, because another runner holds it, refuses with its reason."""
    import brainbench.executors.sidecar as sidecar

    port, token, _ = server
    monkeypatch.setattr(sidecar, "BUSY_WAIT_S", 1.0)
    first = TcpCallChannel("codex", "127.0.0.1", port)
    first.connect(token, timeout_s=10)
    try:
        started = time.monotonic()
        with pytest.raises(CallServerError, match="refused the runner: busy"):
            TcpCallChannel("codex", "127.0.0.1", port).connect(token, timeout_s=10)
        assert 1.0 <= time.monotonic() - started < 8
        assert first.alive and first.hello(10.0).get("ready")  # the holder is untouched
    finally:
        first.close()


def test_calls_sent_just_before_a_hang_up_are_killed(server: tuple[int, str, str]) -> None:
    """A client that sends a call and hangs up at once: the hook may start after the hang-up's
    sweep (CI caught one such hook living on); it must die all the same, in both servers."""
    port, token, marker = server
    # Hooks that would sleep 600 s under a 300 s call deadline: within the 120 s waited below,
    # only the hang-up can have ended them.
    call = json.dumps({"id": 2, "stdin": "600", "timeout_s": 300, "env": {}}).encode() + b"\n"
    sent = 0
    deadline = time.monotonic() + 60
    while sent < 20 and time.monotonic() < deadline:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            if not _handshake(conn, token).get("ready"):
                time.sleep(0.05)  # busy: the previous client's session is still winding down
                continue
            conn.sendall(call)
        sent += 1
    assert sent == 20
    # A hook is killed as soon as the server learns its pid, when Popen returns; under the parallel
    # pass's load that took over 10 s once in CI (the hook itself was still starting). No hook seen
    # is not enough to stop waiting: a call's thread may not have started its hook yet (CI once saw
    # one start, already being killed, just after the wait ended), so wait until the server is back to
    # its one idle thread too, which holds once every call's thread has reaped its hook.
    server_pid = next(pid for pid, cmdline in _cmdlines(marker).items() if "--listen" in cmdline)
    deadline = time.monotonic() + 120
    while (_hooks(marker) or _threads(server_pid) > 1) and time.monotonic() < deadline:
        time.sleep(0.05)
    survivors = _hooks(marker)
    seen = {pid: _stat(pid) for pid in survivors}  # for the failure message: how each one lives on
    for pid in survivors:  # never leave a 600 s sleeper behind a failure
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert not survivors, f"{len(survivors)} hook(s) outlived their client's hang-up: {seen}"
    assert _threads(server_pid) == 1, "a call's thread outlived its killed hook by 120 s"


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def _stat(pid: int) -> str:
    """State, parent, process group, session, start time, signals and wait channel of ``pid`` (/proc), or
    why there are none: a survivor seen once in CI (state R, the server its parent) left too little to go on."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
                      if line.split(":", 1)[0] in ("SigPnd", "ShdPnd", "SigBlk", "Threads"))
        wchan = Path(f"/proc/{pid}/wchan").read_text()
    except (OSError, IndexError, ValueError) as exc:
        return f"gone ({exc.__class__.__name__})"
    signals = " ".join(f"{k} {v.strip()}" for k, v in sorted(status.items()))
    return (f"state {fields[0]} ppid {fields[1]} pgid {fields[2]} sid {fields[3]} started {fields[19]} ticks "
            f"after boot, {signals}, wchan {wchan or '-'}")


def test_a_hook_started_after_its_client_hung_up_dies_at_once() -> None:
    """The Python server's half of that race, forced: the session is gone before the hook starts."""
    from brainbench.executors.call_server import Session, run_call

    marker = f"bbtest-late-{uuid.uuid4().hex[:8]}"
    session = Session(lambda line: None)
    session.hang_up()
    answer = run_call([sys.executable, "-c", "import time; time.sleep(60)", marker],
                      {"id": 7, "stdin": "", "timeout_s": 60}, session)
    assert answer["timed_out"] and answer["run_ms"] < 30_000, answer
    assert _running(marker) == 0



def _forwarder(backend: int, accepted: list[socket.socket]) -> tuple[socket.socket, int]:
    """A published port as Docker's proxy makes one: it takes every connection, then dials the backend
    and hangs up without a byte when nothing listens there yet.  Its first connection it keeps and
    leaves silent, as a connection taken by a server that was dying is left."""
    listener = socket.create_server(("127.0.0.1", 0))

    def pipe(src: socket.socket, dst: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while chunk := src.recv(65536):
                dst.sendall(chunk)
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = listener.accept()
                accepted.append(client)
                if len(accepted) == 1:
                    continue
                try:
                    upstream = socket.create_connection(("127.0.0.1", backend), timeout=5)
                except OSError:
                    client.close()
                    continue
                for src, dst in ((client, upstream), (upstream, client)):
                    threading.Thread(target=pipe, args=(src, dst), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener, listener.getsockname()[1]


def test_a_forwarded_port_with_nobody_behind_it_yet_is_waited_for_not_refused() -> None:
    """A sidecar that restarts behind a forwarder: the runner's first connection is left silent, the
    next ones are closed without a byte; it tries again within its deadline (8 s here, less than one
    full handshake wait) and reaches the server once it listens."""
    token = uuid.uuid4().hex
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        backend = probe.getsockname()[1]
    accepted: list[socket.socket] = []
    listener, port = _forwarder(backend, accepted)
    outcome: dict[str, object] = {}

    def connect() -> None:
        channel = TcpCallChannel("codex", "127.0.0.1", port)
        try:
            channel.connect(token, timeout_s=8)
            outcome["ready"] = True
        except CallServerError as exc:
            outcome["error"] = str(exc)
        finally:
            channel.close()

    client = threading.Thread(target=connect)
    client.start()
    proc = None
    try:
        deadline = time.monotonic() + 6
        while len(accepted) < 3 and time.monotonic() < deadline:  # silent once, hung up on at least once
            time.sleep(0.05)
        assert len(accepted) >= 3 and client.is_alive(), outcome
        proc = subprocess.Popen([sys.executable, str(SERVER_PY), "--listen", f"127.0.0.1:{backend}", "--",
                                 sys.executable, "-c", "pass"],
                                env={**os.environ, "BRAINBENCH_CALL_TOKEN": token}, stderr=subprocess.DEVNULL)
        client.join(20)
        assert outcome == {"ready": True}
    finally:
        listener.close()
        for conn in accepted:
            conn.close()
        if proc is not None:
            proc.kill()
            proc.wait()
