"""``brainbench brain serve``: the README's "Hooks by hand" works literally against it."""

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


def test_serve_seeds_prints_the_hook_env_and_drops_the_brain_on_ctrl_c(tmp_path: Path) -> None:
    env_file = tmp_path / "brain.env"
    proc = subprocess.Popen([sys.executable, "-m", "brainbench.cli", "brain", "serve", FIXTURE,
                             "--env-file", str(env_file)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 120
        while not env_file.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "brain serve never came up"
            time.sleep(0.2)
        env = _read_env(env_file)
        assert set(env) == {"BRAINBENCH_DATABASE_URL", "BRAINBENCH_SOURCE"}
        assert env["BRAINBENCH_SOURCE"] == "default"
        hook = subprocess.run([sys.executable, "-m", "brainbench.seams.openclaw"], capture_output=True, text=True,
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
    assert f"brain of {FIXTURE}: 3 page(s)" in err and "stopped: brain dropped" in err
    assert not env_file.exists()
    with pytest.raises(psycopg.OperationalError):  # the embedded server is gone with its brain
        psycopg.connect(env["BRAINBENCH_DATABASE_URL"] + "&connect_timeout=2").close()


def test_serve_unknown_fixture_suggests_near_names() -> None:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "brain", "serve", "kta-001-deal-recal"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert "no fixture 'kta-001-deal-recal'" in proc.stderr and f"did you mean {FIXTURE}" in proc.stderr
