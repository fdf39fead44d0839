"""``brainbench brain serve``: docs/RUNNING.md's "Hooks by hand" works literally against it."""

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

FIXTURE = "kta-001-deal-recall"


def _read_env(path: Path) -> dict[str, str]:
    # The file is what `source` reads: `export K='V'` lines.
    import shlex

    env = {}
    for line in path.read_text().splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = shlex.split(value)[0]
    return env


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _serve(fixture: str, env_file: Path) -> subprocess.Popen[str]:
    # Started with SIGINT ignored, as a shell starts a background job: Ctrl-C must still stop it.
    proc = subprocess.Popen([sys.executable, "-m", "brainbench.cli", "brain", "serve", fixture,
                             "--env-file", str(env_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=_ignore_sigint)
    deadline = time.monotonic() + 120
    while not env_file.exists():
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"brain serve never came up: {proc.communicate()}")
        time.sleep(0.2)
    return proc


def test_serve_seeds_prints_the_hook_env_and_drops_the_brain_on_ctrl_c(tmp_path: Path) -> None:
    env_file = tmp_path / "brain.env"
    proc = _serve(FIXTURE, env_file)
    try:
        env = _read_env(env_file)
        assert set(env) == {"BRAINBENCH_DATABASE_URL", "BRAINBENCH_SOURCE"}
        assert env["BRAINBENCH_SOURCE"] == "default"
        hook = subprocess.run([sys.executable, "-m", "brainbench.hooks", "openclaw"], capture_output=True, text=True,
                              timeout=60, check=False, env={**os.environ, **env},
                              input=json.dumps({"hook_event_name": "UserPromptSubmit", "session_id": "s",
                                                "prompt": "What did Alice Example say?", "cwd": "/tmp"}))
        assert hook.returncode == 0, hook.stderr
        assert "→ `people/alice-example`" in json.loads(hook.stdout)["hookSpecificOutput"]["additionalContext"]
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.startswith("export BRAINBENCH_DATABASE_URL=")
    assert f"brain of {FIXTURE}: 3 seeded page(s)" in err and "stopped: brain dropped" in err
    assert not env_file.exists()
    with pytest.raises(psycopg.OperationalError):  # the embedded server is gone with its brain
        psycopg.connect(env["BRAINBENCH_DATABASE_URL"] + "&connect_timeout=2").close()


def test_a_continuity_reader_gets_its_pairs_brain(tmp_path: Path) -> None:
    env_file = tmp_path / "brain.env"
    proc = _serve("cont-001-widget-pass-reader", env_file)
    try:
        with psycopg.connect(_read_env(env_file)["BRAINBENCH_DATABASE_URL"]) as conn:
            slugs = {row[0] for row in conn.execute("SELECT slug FROM pages")}
            facts = conn.execute("SELECT count(*) FROM facts").fetchone()[0]
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    # What the writer's conversation wrote back is there, as when a run replays the reader.
    assert "conversations/bench-cont-001-widget-pass-writer" in slugs and facts > 0
    assert "the brain also holds cont-001-widget-pass-writer's seeds and its write-back" in err


def test_serve_unknown_fixture_suggests_near_names() -> None:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "brain", "serve", "kta-001-deal-recal"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert "no fixture 'kta-001-deal-recal'" in proc.stderr and f"did you mean {FIXTURE}" in proc.stderr
