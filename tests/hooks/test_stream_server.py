"""Stream-mode hook processes relayed to the warm hook server: same bytes, lean, one server, tidy.

Real processes throughout: each stream process is ``python -m brainbench.hooks SEAM --stream``
started as the local executor starts it; the server is the one the clients start themselves.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from brainbench.hooks.__main__ import socket_path
from brainbench.models.stream_codec import encode_request
from processes import live_processes  # type: ignore[import-not-found]
from test_warm_server import HEAVY, PROMPT, _env, _imported, alice_url, short_tmp  # type: ignore[import-not-found]

__all__ = ["alice_url", "short_tmp"]  # fixtures, used by name


def _request(rid: int, body: object, cwd: str | None = "/tmp", **env: str) -> str:
    """One request line as the runner writes it (its stream codec), without the newline."""
    return encode_request(rid, env, body, cwd).decode().rstrip("\n")


def _stream(seam: str, lines: list[str], env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, "-m", "brainbench.hooks", seam, "--stream"],
                          input="".join(line + "\n" for line in lines), env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def _servers(path: str) -> list[int]:
    """Live server processes for ``path``."""
    return [pid for pid, cmdline in live_processes().items() if "brainbench.hooks.serve" in cmdline and path in cmdline]


def _connections(conn: psycopg.Connection, url: str) -> int:
    database = psycopg.conninfo.conninfo_to_dict(url)["dbname"]
    row = conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
                       (database,)).fetchone()
    assert row is not None
    return int(row[0])


def test_stream_sessions_answer_the_in_process_bytes(alice_url: str, tmp_path: Path, short_tmp: Path) -> None:
    url = alice_url
    a_file = tmp_path / "not-a-dir"
    a_file.write_text("")
    lines = [
        _request(1, {"hook_event_name": "BrainBenchHandshake"}),
        _request(2, PROMPT),
        _request(3, PROMPT, cwd=None),
        _request(4, PROMPT, cwd=str(tmp_path / "gone")),  # no hook could start there: exit 75
        _request(5, PROMPT, cwd=str(a_file)),
        _request(6, {**PROMPT, "hook_event_name": "SessionStart", "source": "startup"}),
        _request(7, [1, 2]),
        _request(8, PROMPT, BRAINBENCH_SOURCE="elsewhere"),  # the request's env over the process's
        "not json",
        "",
        _request(9, PROMPT),
    ]
    for seam in ("openclaw", "claude-code", "codex"):
        want = _stream(seam, lines, _env(url, short_tmp, BRAINBENCH_HOOK_SERVE="0"))
        got = _stream(seam, lines, _env(url, short_tmp), "-X", "importtime")
        assert (got.returncode, got.stdout) == (want.returncode, want.stdout), seam
        assert want.stdout.count("\n") == len(lines) - 1, want.stdout  # the empty line is skipped, not answered
        # Even the first client, which found no server, waited for one rather than importing the stack.
        heavy = sorted(m for m in _imported(got.stderr) if m.startswith(HEAVY))
        assert not heavy, f"a {seam} stream process imported {heavy}"
    answers = [json.loads(line) for line in want.stdout.splitlines()]
    assert "people/alice-example" in answers[1]["stdout"]
    assert [a["exit_code"] for a in answers if a["id"] in (4, 5)] == [75, 75]
    assert "Not a directory" in answers[4]["stderr"]
    path = socket_path(_env(url, short_tmp))
    assert path is not None and _servers(path), "the stream clients should have left a warm server"


def test_a_killed_stream_process_ends_its_session_and_connection(brain: tuple[psycopg.Connection, str],
                                                                 short_tmp: Path) -> None:
    conn, url = brain
    proc = subprocess.Popen([sys.executable, "-m", "brainbench.hooks", "openclaw", "--stream"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_env(url, short_tmp),
                            start_new_session=True)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write((_request(1, PROMPT) + "\n").encode())
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["exit_code"] == 0
        # The session holds its brain connection between calls, as a stream process does.
        assert _connections(conn, url) == 1
        os.killpg(proc.pid, signal.SIGKILL)  # how the runner stops a stream process
        proc.wait(timeout=10)
        deadline = time.monotonic() + 10
        while _connections(conn, url) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _connections(conn, url) == 0, "the killed process's session kept its brain connection"
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdin.close()
        proc.stdout.close()


def test_stream_processes_started_at_once_share_one_server(brain: tuple[psycopg.Connection, str],
                                                           short_tmp: Path) -> None:
    _, url = brain
    env = _env(url, short_tmp)
    path = socket_path(env)
    assert path is not None
    procs = [subprocess.Popen([sys.executable, "-m", "brainbench.hooks", seam, "--stream"], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=env)
             for seam in ("openclaw", "claude-code", "codex") * 2]
    outs = [p.communicate(_request(1, PROMPT) + "\n", timeout=120)[0] for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert all(json.loads(out)["exit_code"] == 0 for out in outs), outs
    # The servers the other clients started found the first one's lock and left.
    deadline = time.monotonic() + 10
    while len(_servers(path)) > 1 and time.monotonic() < deadline:
        time.sleep(0.1)
    assert len(_servers(path)) == 1


@pytest.mark.timeout(120)
def test_an_open_session_keeps_an_idle_server(brain: tuple[psycopg.Connection, str], short_tmp: Path) -> None:
    _, url = brain
    env = _env(url, short_tmp, BRAINBENCH_HOOK_SERVE_IDLE_S="1")
    path = socket_path(env)
    assert path is not None
    proc = subprocess.Popen([sys.executable, "-m", "brainbench.hooks", "codex", "--stream"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdin is not None and proc.stdout is not None
    for rid in (1, 2):
        proc.stdin.write(_request(rid, PROMPT) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == rid
        time.sleep(3)  # three idle periods between calls, as a run's slow turn might leave
    assert _servers(path), "the server left while a stream session was open"
    proc.stdin.close()
    assert proc.wait(timeout=30) == 0
    proc.stdout.close()
    deadline = time.monotonic() + 30
    while _servers(path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _servers(path), "the idle server did not leave after its last session"
