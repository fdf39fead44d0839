"""The real CLI, one process per command, without paying the interpreter start-up every time.

Tests that launch the CLI hundreds of times (N=200 shards) spend most of each run importing
BrainBench: ~1.5 s of CPU a process, most of the suite's time on a 2-core machine.  A
server (this file run as a script) imports the CLI once and ``fork``s a child per command;
the child is a separate process that runs ``brainbench.cli.main()`` with its own argv, cwd,
stdio (files) and exit status, exactly as ``python -m brainbench.cli`` would after its
imports.  Nothing of a run is shared: the server never calls into BrainBench, and it
refuses to fork once any per-process state (the run's owner record) has been computed.

Use only where the environment is the same for every command (the server's); a test that
changes the environment per command starts a fresh interpreter instead.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

_SERVER = Path(__file__).resolve()


class ForkedCli:
    """One server process; ``run`` is serialised, so use one instance per concurrent caller."""

    def __init__(self, env: dict[str, str]) -> None:
        self._proc = subprocess.Popen([sys.executable, str(_SERVER)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      text=True, env=env)
        self._lock = threading.Lock()

    def run(self, *args: str | Path, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
        with self._lock, tempfile.TemporaryDirectory(prefix="bbtest-fork-") as tmp:
            out, err = Path(tmp) / "stdout", Path(tmp) / "stderr"
            assert self._proc.stdin is not None and self._proc.stdout is not None
            request = {"argv": [str(a) for a in args], "cwd": str(cwd), "stdout": str(out), "stderr": str(err),
                       "timeout": timeout}
            self._proc.stdin.write(json.dumps(request) + "\n")
            self._proc.stdin.flush()
            line = self._proc.stdout.readline()
            if not line:
                raise RuntimeError(f"the forked-CLI server died (exit {self._proc.wait()})")
            code = int(json.loads(line)["returncode"])
            return subprocess.CompletedProcess(["brainbench", *request["argv"]], code, out.read_text(),
                                               err.read_text())

    def close(self) -> None:
        if self._proc.stdin is not None:
            self._proc.stdin.close()
        self._proc.wait(timeout=60)


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become ``brainbench ARGV`` and exit with its status; never returns."""
    code: int = 1
    try:
        signal.alarm(max(1, int(request["timeout"])))  # SIGALRM kills a child that overstays, as a timeout would
        os.chdir(request["cwd"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["stdout"]), (2, request["stderr"])):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        os.close(null)
        sys.stdin = open(os.devnull)  # lives as long as the process
        sys.argv = ["brainbench", *request["argv"]]
        from brainbench.cli import main

        main()
        code = 0
    except SystemExit as exc:
        # What the interpreter does with SystemExit's argument.
        if exc.code is None:
            code = 0
        elif isinstance(exc.code, int):
            code = exc.code
        else:
            sys.stderr.write(f"{exc.code}\n")
            code = 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        import atexit

        atexit._run_exitfuncs()  # what a normal interpreter exit runs (the CLI's owner lock release)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                pass
        os._exit(code)


def _serve() -> None:
    # The import cost each command would otherwise pay, run and registered by main() in the child.
    import brainbench.cli
    import brainbench.cli_options
    import brainbench.cli_run
    import brainbench.orchestrator.run  # noqa: F401
    from brainbench.ownership import owner_taken

    for line in sys.stdin:
        request = json.loads(line)
        # The owner record (pid, lock file) is per process: computed here it would be every child's.
        if owner_taken():
            raise SystemExit("forked_cli: per-process state exists in the server; refusing to fork")
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        sys.stdout.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    _serve()
