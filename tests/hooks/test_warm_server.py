"""The exec-mode hook client and the warm hook server: same bytes as in-process, lean, and tidy.

Real processes throughout: each call is ``python -m brainbench.hooks SEAM`` with
JSON on stdin; the server is the one the client starts itself.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.store import import_page
from brainbench.hooks import program
from brainbench.hooks.__main__ import MAX_STDIN_BYTES, socket_path, warm_server

PAGE = "---\ntitle: Alice Example\ntype: person\naliases: [alice]\nsummary: Founder of Widget Co.\n---\n\nAlice.\n"
PROMPT = {"hook_event_name": "UserPromptSubmit", "session_id": "s", "prompt": "What did Alice Example say?",
          "cwd": "/tmp", "messages": []}
# Nothing of the schema, CLI or database machinery belongs on a warm call's start-up path.
HEAVY = ("psycopg", "pydantic", "typer", "rich", "regex", "yaml", "brainbench.reflex", "brainbench.brain")


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A TMPDIR short enough for a Unix socket path (pytest's own tmp_path is not)."""
    path = Path(tempfile.mkdtemp(prefix="bbh-", dir="/tmp"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def alice_url(brain: tuple[psycopg.Connection, str]) -> str:
    """A fresh brain that knows Alice Example: its URL."""
    conn, url = brain
    import_page(conn, "people/alice-example", PAGE, "default")
    return url


def _env(url: str, tmp: Path, **extra: str) -> dict[str, str]:
    return {"BRAINBENCH_DATABASE_URL": url, "BRAINBENCH_SOURCE": "default", "PATH": "/usr/bin:/bin",
            "TMPDIR": str(tmp), "BRAINBENCH_HOOK_SERVE_IDLE_S": "3", **extra}


def _call(seam: str, raw: str, env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, "-m", "brainbench.hooks", seam], input=raw, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


def _wait_for_server(env: dict[str, str]) -> str:
    path = socket_path(env)
    assert path is not None
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(path)
                return path
            except OSError:
                time.sleep(0.1)
    raise AssertionError(f"no hook server answered on {path}")


def _imported(stderr: str) -> set[str]:
    return {line.split("|")[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


def test_warm_answers_are_the_in_process_bytes(alice_url: str, tmp_path: Path, short_tmp: Path) -> None:
    url = alice_url
    transcript = tmp_path / "elsewhere.jsonl"
    transcript.write_text("")
    cases = [
        ("openclaw", json.dumps(PROMPT)),
        ("claude-code", json.dumps(PROMPT)),
        ("claude-code", json.dumps({**PROMPT, "transcript_path": str(transcript)})),  # not confined: silent
        ("codex", json.dumps(PROMPT)),
        ("codex", json.dumps({**PROMPT, "hook_event_name": "SessionStart", "source": "startup"})),
        ("openclaw", ""), ("openclaw", "[1]"), ("openclaw", "not json"), ("codex", "{}"),
    ]
    cold = _env(url, short_tmp, BRAINBENCH_HOOK_SERVE="0")
    warm = _env(url, short_tmp)
    _call("openclaw", "{}", warm)  # finds no server: answers in-process and starts one
    _wait_for_server(warm)
    for seam, raw in cases:
        want = _call(seam, raw, cold)
        got = _call(seam, raw, warm, "-X", "importtime")
        assert (got.returncode, got.stdout) == (want.returncode, want.stdout), (seam, raw)
        # -X importtime writes to the same stderr: the hook's own lines are what is left.
        hook_err = [line for line in got.stderr.splitlines() if not line.startswith("import time:")]
        assert hook_err == want.stderr.splitlines(), (seam, raw)
        heavy = sorted(m for m in _imported(got.stderr) if m.startswith(HEAVY))
        assert not heavy, f"a warm {seam} call imported {heavy}"
    assert "people/alice-example" in _call("openclaw", json.dumps(PROMPT), warm).stdout


def test_unreachable_brain_is_exit_75_on_both_paths(tmp_path: Path, short_tmp: Path) -> None:
    dead = f"postgresql://postgres@/nope?host={tmp_path}&connect_timeout=2"
    for extra in ({"BRAINBENCH_HOOK_SERVE": "0"}, {}):
        env = _env(dead, short_tmp, **extra)
        _call("codex", "{}", env)
        if not extra:
            _wait_for_server(env)
        proc = _call("openclaw", json.dumps(PROMPT), env)
        assert proc.returncode == 75 and "brain unavailable" in proc.stderr, (extra, proc.stderr)


def _servers(path: str) -> list[int]:
    """The pids of hook servers for ``path`` on this machine."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"brainbench.hooks.serve" in argv and path.encode() in argv:
            found.append(int(entry.name))
    return found


def test_a_runner_starts_the_server_ahead_and_the_first_call_finds_it(alice_url: str, short_tmp: Path) -> None:
    # What `brainbench run` does before its own imports (cli_run._warm_hook_server).
    env = _env(alice_url, short_tmp, BRAINBENCH_HOOK_SERVE_IDLE_S="10")
    path = socket_path(env)
    assert path is not None
    began = time.monotonic()
    warm_server(env)
    assert time.monotonic() - began < 1.0  # it never waits for the server's imports
    _wait_for_server(env)
    [server] = _servers(path)
    warm_server(env)  # one is up: no second
    got = _call("openclaw", json.dumps(PROMPT), env, "-X", "importtime")
    assert got.returncode == 0 and "people/alice-example" in got.stdout, got.stderr
    assert not [m for m in _imported(got.stderr) if m.startswith(HEAVY)]  # the server answered it
    assert _servers(path) == [server]


def test_no_server_is_started_ahead_where_hooks_answer_in_process(short_tmp: Path) -> None:
    env = {"TMPDIR": str(short_tmp), "BRAINBENCH_HOOK_SERVE": "0"}
    path = socket_path(env)
    assert path is not None
    warm_server(env)
    time.sleep(0.5)
    assert not os.path.exists(path) and not _servers(path)


def test_stale_socket_is_replaced_and_idle_server_leaves(brain: tuple[psycopg.Connection, str],
                                                         short_tmp: Path) -> None:
    _, url = brain
    env = _env(url, short_tmp, BRAINBENCH_HOOK_SERVE_IDLE_S="1")
    path = socket_path(env)
    assert path is not None
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)  # a server that died without cleaning up: the file stays, nobody listens
    stale.close()
    proc = _call("openclaw", json.dumps(PROMPT), env)
    assert proc.returncode == 0, proc.stderr
    _wait_for_server(env)
    deadline = time.monotonic() + 30
    while os.path.exists(path) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not os.path.exists(path), "the idle server did not leave"


def test_private_socket_directory(short_tmp: Path) -> None:
    env = {"TMPDIR": str(short_tmp)}
    path = socket_path(env)
    assert path is not None
    directory = Path(path).parent
    assert directory.parent == short_tmp
    assert directory.stat().st_mode & 0o777 == 0o700
    directory.chmod(0o755)  # readable by others: not ours to trust
    assert socket_path(env) is None


def test_client_and_program_agree_on_the_stdin_limit() -> None:
    assert MAX_STDIN_BYTES == program.MAX_STDIN_BYTES


def test_a_run_starts_the_server_ahead_only_for_our_adapters_as_local_processes() -> None:
    from brainbench.cli_run import runs_our_adapters_locally
    from brainbench.models.config import RunConfig, SeamOverride

    assert runs_our_adapters_locally(RunConfig())
    assert runs_our_adapters_locally(RunConfig(seams={"codex": SeamOverride(image="example/memory:1")}))
    assert not runs_our_adapters_locally(RunConfig(executor="docker"))
    assert not runs_our_adapters_locally(RunConfig(
        harnesses=["codex"], seams={"codex": SeamOverride(command=["/bin/true"])}))


def test_only_our_own_adapters_run_here_reach_the_brain_without_a_gate() -> None:
    from brainbench.models.config import RunConfig, SeamOverride
    from brainbench.orchestrator.launch import gated_seams

    assert gated_seams(RunConfig()) == []
    mixed = RunConfig(seams={"codex": SeamOverride(image="example/memory:1"),
                             "openclaw": SeamOverride(command=["/bin/true"])})
    assert gated_seams(mixed) == [h for h in mixed.harnesses if h in ("codex", "openclaw")]
    assert sorted(gated_seams(RunConfig(executor="docker"))) == sorted(RunConfig().harnesses)
    assert sorted(gated_seams(RunConfig(executor="sidecar"))) == sorted(RunConfig().harnesses)
