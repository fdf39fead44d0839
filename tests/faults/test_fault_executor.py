"""The local executor's deadline holds against hooks that fight it.

A timeout must bound the whole call — writing stdin and reading stdout to EOF —
not just the wait for the hook's own exit: otherwise one hook that never reads
its stdin, or that leaves a daemon holding its stdout, stalls the run forever.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import textwrap
import time
from pathlib import Path

import anyio
import pytest
from brainbench.executors.base import HookCall, HookOutcome, SeamLaunch
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.grading import grade

PROMPT = b'{"hook_event_name":"UserPromptSubmit","session_id":"s","cwd":"/tmp","prompt":"hi"}'
ANSWER = '{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"canned"}}'


def call_hook(tmp_path: Path, source: str, payload: bytes = PROMPT, timeout_s: float = 1.5) -> HookOutcome:
    hook = tmp_path / "hook.py"
    hook.write_text(source)

    async def go() -> HookOutcome:
        seam = await LocalExecutor().start(SeamLaunch(seam="codex", command=(sys.executable, str(hook)),
                                                      mode="exec"))
        try:
            return await seam.call(HookCall(payload, {}, timeout_s))
        finally:
            await seam.stop()

    return anyio.run(go)


def _kill(pidfile: Path) -> None:
    with contextlib.suppress(OSError, ValueError):
        os.kill(int(pidfile.read_text()), signal.SIGKILL)


@pytest.mark.timeout(60)
def test_a_daemon_holding_stdout_is_a_timeout_not_a_hang(tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon.pid"
    # The grandchild leaves the hook's process group (so killpg cannot reach it) but keeps stdout.
    source = textwrap.dedent(f"""
        import subprocess, sys, time
        from pathlib import Path
        sys.stdin.read()
        pidfile = Path({str(pidfile)!r})
        code = "import os, time; os.setsid(); open(%r, 'w').write(str(os.getpid())); time.sleep(30)" % str(pidfile)
        subprocess.Popen([sys.executable, "-c", code])
        while not (pidfile.exists() and pidfile.read_text()):
            time.sleep(0.01)
        print({ANSWER!r})
    """)
    started = time.monotonic()
    try:
        outcome = call_hook(tmp_path, source)
    finally:
        _kill(pidfile)
    assert time.monotonic() - started < 10, "the call waited for the daemon instead of the deadline"
    assert outcome.timed_out and outcome.stdout == b""  # Claude Code and Codex wait for EOF, then discard
    assert grade(outcome, "codex").fault == "adapter_timeout"


@pytest.mark.timeout(60)
def test_a_hook_that_never_reads_a_large_stdin_times_out(tmp_path: Path) -> None:
    # 1 MiB cannot fit the pipe buffer, so writing it blocks until the hook reads — which it never does.
    payload = PROMPT[:-1] + b',"pad":"' + b"x" * (1 << 20) + b'"}'
    started = time.monotonic()
    outcome = call_hook(tmp_path, "import time\ntime.sleep(30)\n", payload)
    assert time.monotonic() - started < 10, "the runner blocked writing stdin past the deadline"
    assert outcome.timed_out
    assert grade(outcome, "codex").fault == "adapter_timeout"


@pytest.mark.timeout(60)
def test_a_hook_that_answers_without_reading_stdin_is_graded_normally(tmp_path: Path) -> None:
    payload = PROMPT[:-1] + b',"pad":"' + b"x" * (1 << 20) + b'"}'
    outcome = call_hook(tmp_path, f"print({ANSWER!r})\n", payload, timeout_s=10)
    assert not outcome.timed_out and outcome.exit_code == 0
    graded = grade(outcome, "codex")
    assert graded.fault is None and graded.context == "canned"
