"""The seam gate (brain/gate.py) as a relay: real sockets, a real relay process, a real server.

The hostile cases run in tests/security/test_brain_share.py; here the relay's own duties: bytes
both ways in order (megabytes past the socket buffers, so the back-pressure path runs), a slot
freed when its connection closes, the refusal a client hears, a login through it, and the relay
gone once the runner is.
"""

from __future__ import annotations

import hashlib
import os
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.brain.gate import SOCKET_NAME, SeamGates, server_socket, via_gate


class Echo:
    """An upstream that echoes every connection back, reading slowly."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(64)
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self._echo, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with conn:
            while data := conn.recv(1 << 16):
                time.sleep(0.001)  # a slow reader: the relay must queue, not drop
                conn.sendall(data)


@pytest.fixture
def gates(tmp_path: Path) -> Iterator[tuple[SeamGates, list[tuple[str, str]]]]:
    Echo(tmp_path / "up")
    seen: list[tuple[str, str]] = []
    made = SeamGates(str(tmp_path / "up"), {"codex": 2, "openclaw": 2}, tmp_path, lambda s, w: seen.append((s, w)))
    try:
        yield made, seen
    finally:
        made.close()


def _connect(gates: SeamGates, seam: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(Path(gates.directory(seam) or "") / SOCKET_NAME))
    return sock


def test_bytes_pass_both_ways_in_order_past_the_socket_buffers(gates: Any) -> None:
    made, seen = gates
    payload = os.urandom(8 << 20)
    sock = _connect(made, "codex")
    got = bytearray()

    def read() -> None:
        while len(got) < len(payload) and (data := sock.recv(1 << 16)):
            got.extend(data)

    reader = threading.Thread(target=read)
    reader.start()
    sock.sendall(payload)
    reader.join(timeout=60)
    sock.close()
    assert hashlib.sha256(got).digest() == hashlib.sha256(payload).digest()
    assert seen == []


def test_a_seam_past_its_cap_hears_53300_and_a_closed_slot_is_free_again(gates: Any) -> None:
    made, seen = gates
    held = [_connect(made, "codex") for _ in range(2)]
    for sock in held:  # both relayed: an echo proves it
        sock.sendall(b"x")
        assert sock.recv(1) == b"x"
    extra = _connect(made, "codex")
    message = extra.recv(4096)
    assert message[:1] == b"E" and struct.unpack("!I", message[1:5])[0] == len(message) - 1
    assert b"C53300\0" in message and b"seam codex holds its share of 2 brain connections" in message
    assert extra.recv(1) == b""  # and closed
    # Another seam's share is its own: openclaw is not refused while codex is full.
    other = _connect(made, "openclaw")
    other.sendall(b"y")
    assert other.recv(1) == b"y"
    deadline = time.monotonic() + 5
    while not seen and time.monotonic() < deadline:
        time.sleep(0.05)
    assert seen == [("codex", "more than 2 connections open at once (pending logins included)")]
    held.pop().close()
    time.sleep(0.3)  # the relay sees the close
    again = _connect(made, "codex")
    again.sendall(b"z")
    assert again.recv(1) == b"z"


def test_the_relay_goes_when_the_runner_does(tmp_path: Path) -> None:
    script = tmp_path / "runner.py"
    script.write_text(
        "import socket, sys, time\nfrom pathlib import Path\nfrom brainbench.brain.gate import SeamGates\n"
        f"d = Path({str(tmp_path)!r})\n"
        "up = socket.socket(socket.AF_UNIX); up.bind(str(d / 'up')); up.listen(8)\n"
        "g = SeamGates(str(d / 'up'), {'codex': 2}, d, lambda s, w: None)\n"
        "print(g._proc.pid, flush=True)\ntime.sleep(600)\n")
    runner = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    assert runner.stdout is not None
    relay = int(runner.stdout.readline())
    runner.kill()
    runner.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{relay}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not Path(f"/proc/{relay}").exists() or "Z" in Path(f"/proc/{relay}/stat").read_text().split()[2]


def test_a_login_through_the_gate_is_the_servers_own(pg_server: Any) -> None:
    upstream = server_socket(pg_server.admin_url)
    assert upstream == f"{pg_server.socket_dir}/.s.PGSQL.5432"
    seen: list[tuple[str, str]] = []
    made = SeamGates(upstream, {"codex": 3}, None, lambda s, w: seen.append((s, w)))
    try:
        url = via_gate(pg_server.admin_url, made.directory("codex") or "")
        assert f"host={made.directory('codex')}" in url and str(pg_server.socket_dir) not in url
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT 41 + 1").fetchone() == (42,)
        with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
            psycopg.connect(url.replace(pg_server.password, "wrong")).close()
        assert seen == []
    finally:
        made.close()
    assert not Path(made.directory("codex") or "/nonexistent").exists()
