"""The call server runs the image's other commands too (``"argv"`` in a call): the seed contract's init,
seed, write_back and operations go through it instead of a ``docker exec`` each (~70 ms of the engine's
time; the memory-trust suites send an image about a thousand operations).  Such a command runs exactly
as the hook does, and anything but a non-empty list of strings is refused, never run as the hook.
Both servers (call_server.py and the static call_server.c) must behave the same.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from brainbench.executors.docker.static_helper import helper_binary

SERVER_PY = Path(__file__).parents[2] / "runner" / "brainbench" / "executors" / "call_server.py"
HOOK = ["sh", "-c", "cat >/dev/null; echo hook"]
VARIANTS = [pytest.param("python", id="python"),
            pytest.param("static", id="static", marks=pytest.mark.skipif(
                helper_binary() is None, reason="this host cannot build the static call server (cc -static)"))]


class Server:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.ids = iter(range(1, 1000))

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        rid = next(self.ids)
        self.proc.stdin.write(json.dumps({**request, "id": rid}).encode() + b"\n")
        self.proc.stdin.flush()
        answer = json.loads(self.proc.stdout.readline())
        assert answer["id"] == rid
        return answer


@pytest.fixture(params=VARIANTS)
def server(request: pytest.FixtureRequest) -> Iterator[Server]:
    cmd = [str(helper_binary())] if request.param == "static" else [sys.executable, str(SERVER_PY)]
    proc = subprocess.Popen([*cmd, *HOOK], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        yield Server(proc)
    finally:
        proc.kill()
        proc.wait()


def test_the_handshake_says_it_runs_commands(server: Server) -> None:
    answer = server.ask({"hello": True})
    assert answer["ready"] is True and answer["argv"] is True


def test_a_command_runs_as_the_hook_would(server: Server) -> None:
    hook = server.ask({"env": {}, "stdin": "x", "timeout_s": 10})
    assert (hook["exit_code"], hook["stdout"]) == (0, "hook\n")
    command = server.ask({"env": {"WHO": "seed"}, "stdin": "the document", "timeout_s": 10,
                          "argv": ["sh", "-c", 'cat; echo "$WHO ran" >&2; exit 3']})
    assert (command["exit_code"], command["stdout"], command["stderr"]) == (3, "the document", "seed ran\n")
    # Its own timeout, like a hook's: killed, its output discarded.
    slow = server.ask({"env": {}, "stdin": "", "timeout_s": 0.5, "argv": ["sh", "-c", "echo early; sleep 30"]})
    assert slow["timed_out"] is True and slow["stdout"] == ""
    # A command that cannot start is the command's failure (exit 127), as for a hook.
    missing = server.ask({"env": {}, "stdin": "", "timeout_s": 10, "argv": ["/nonexistent/seed"]})
    assert missing["exit_code"] == 127


@pytest.mark.parametrize("argv", [[], "sh -c true", ["sh", 1], None, [["sh"]]])
def test_anything_but_a_list_of_strings_is_refused_and_nothing_runs(server: Server, argv: object) -> None:
    answer = server.ask({"env": {}, "stdin": "", "timeout_s": 10, "argv": argv})
    assert answer["error"] == "call server: argv must be a non-empty list of strings"
    assert answer["exit_code"] is None and answer["stdout"] == ""  # not the hook either
