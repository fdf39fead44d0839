"""``python -m brainbench.hooks SEAM [--stream]``: our hook program for one seam.

exec (no flag): one JSON on stdin → stdout and exit code, a fresh process per
call as real harnesses run hooks.  This module is the whole start-up path of
such a call, so it imports only what the call needs (no psycopg, pydantic or
reflex): it passes the raw stdin and its environment to the warm hook server
(``hooks/serve.py``, started detached on first use) and prints the answer.
When no server answers (first call, unwritable temp dir, server gone) the call
is answered in-process by the very same code, so the output never depends on
which path answered; ``BRAINBENCH_HOOK_SERVE=0`` forces in-process answers.

--stream: one request per line.  Also a thin client: it relays its stdin and
stdout to a stream session of the same warm server, starting the server and
waiting for it when none answers (so a run's several stream processes pay for
the hook stack's imports once, not each); without a server it answers
in-process (``program.main``), as does ``BRAINBENCH_HOOK_SERVE=0``.
"""

from __future__ import annotations

import marshal  # built in: json would import re, the largest import left on this path
import os
import stat  # already loaded by os: free
import sys

# The C modules behind ``socket`` and ``hashlib``: those wrappers (enum, selectors, OpenSSL)
# cost ≈ 12 ms of every exec call's ≈ 40 ms, and this path needs nothing they add.
from _socket import AF_UNIX, SHUT_WR, SOCK_STREAM
from _socket import socket as unix_socket

try:
    from _sha256 import sha256  # Python ≤ 3.11
except ImportError:  # pragma: no cover - renamed in 3.12
    from hashlib import sha256

from brainbench.hooks.ipc import SEAM_MODULES as SEAMS
from brainbench.hooks.ipc import STREAM_READY, frame, unframe

# Same limit as program.MAX_STDIN_BYTES (a test holds them equal); not imported
# from there because program.py costs more to import than this whole path.
MAX_STDIN_BYTES = 4 * 1024 * 1024
DEFAULT_IDLE_S = 10.0
# sockaddr_un.sun_path is 108 bytes on Linux.
MAX_SOCKET_PATH = 100
# How long a stream client waits for the server it started before answering in-process.
SERVER_START_S = 30.0
# Environment that changes what a server process would do, besides each call's own env:
# libpq reads PG* from the process environment, imports follow PYTHON*.
_KEY_ENV_PREFIXES = ("PG", "PYTHON")


def _code_fingerprint(package: str) -> list[str]:
    """Every module of the installed package with its mtime and size: edited code gets a new server."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(package):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for name in sorted(filenames):
            if name.endswith(".py"):
                info = os.stat(os.path.join(dirpath, name))
                entries.append(f"{dirpath}/{name}:{info.st_mtime_ns}:{info.st_size}")
    return entries


def socket_path(env: dict[str, str] | os._Environ[str]) -> str | None:
    """The private socket of the server for this code and settings, or None where there can be none."""
    try:
        return _socket_path(env)
    except OSError:  # no working directory, a module vanishing mid-walk: answer in-process
        return None


def _socket_path(env: dict[str, str] | os._Environ[str]) -> str | None:
    uid = os.getuid()
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # Not the working directory: every call starts in its session's own cwd (as under a
    # harness), and the server imports nothing from it (PYTHONSAFEPATH, _start_server).
    key = [sys.executable, str(uid), *_code_fingerprint(package),
           *sorted(f"{k}={v}" for k, v in env.items() if k.startswith(_KEY_ENV_PREFIXES))]
    digest = sha256("\n".join(key).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    for base in (env.get("TMPDIR") or "/tmp", "/tmp"):
        directory = os.path.join(base, f"brainbench-hooks-{uid}")
        path = os.path.join(directory, f"{digest}.sock")
        if len(path) <= MAX_SOCKET_PATH:
            break
    else:
        return None
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    info = os.lstat(directory)
    # Another user's directory (or a symlink) could hand us someone else's answers.
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid or info.st_mode & 0o077:
        return None
    return path


def _start_server(path: str, env: dict[str, str] | os._Environ[str]) -> int | None:
    """The pid of a detached server started for ``path``, or None when none could be started."""
    idle = env.get("BRAINBENCH_HOOK_SERVE_IDLE_S") or str(DEFAULT_IDLE_S)
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        # A new session: the runner kills the hook's process group when the call ends,
        # and the server must outlive this call (like a detached `gbrain serve`).
        # Safe path: the server answers calls from many cwds, so it must not import from the first.
        return os.posix_spawn(sys.executable, [sys.executable, "-m", "brainbench.hooks.serve", path, idle],
                              {**env, "PYTHONSAFEPATH": "1"},
                              file_actions=[(os.POSIX_SPAWN_DUP2, devnull, fd) for fd in (0, 1, 2)], setsid=True)
    except OSError:
        return None
    finally:
        os.close(devnull)


def warm_server(env: dict[str, str] | os._Environ[str]) -> None:
    """Start the server that hooks of this code and ``env`` would use, if none listens, without waiting
    for it: a runner calls this before its own imports, so the server imports the hook stack on the
    other core meanwhile instead of after the runner, when its first seam asks."""
    if env.get("BRAINBENCH_HOOK_SERVE") == "0" or (path := socket_path(env)) is None:
        return
    conn = _connect(path)
    if conn is not None:
        conn.close()  # one is up: it reads an empty request and lets it go
        return
    pid = _start_server(path, env)
    if pid is not None:
        import threading  # not on a hook call's path

        # A server that finds another holding its lock exits at once: reaped here, never a zombie.
        threading.Thread(target=_reap, args=(pid,), name="hook-server-reaper", daemon=True).start()


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def ask_server(path: str, seam: str, raw: bytes, env: dict[str, str] | os._Environ[str]
               ) -> tuple[int, str, str] | None:
    """The server's answer, or None when none answered completely (the caller answers in-process)."""
    conn = _connect(path)
    if conn is None:
        _start_server(path, env)
        return None
    try:
        conn.sendall(frame(marshal.dumps((seam, dict(env), raw))))
        conn.shutdown(SHUT_WR)
        chunks = []
        while chunk := conn.recv(65536):
            chunks.append(chunk)
    except OSError:
        return None
    finally:
        conn.close()
    reply = unframe(b"".join(chunks))
    if reply is None:
        return None  # the server went away mid-call
    try:
        answer = marshal.loads(reply)
    except (ValueError, EOFError, TypeError):
        return None
    if not (isinstance(answer, tuple) and len(answer) == 3):
        return None  # the server could not answer: (None, reason)
    code, out, err = answer
    return int(code), str(out), str(err)


def _connect(path: str) -> unix_socket | None:
    conn = unix_socket(AF_UNIX, SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def _await_server(path: str, env: dict[str, str] | os._Environ[str]) -> unix_socket | None:
    """A connection to the server for ``path``, started here if none listens; None if none came up."""
    import time  # built in

    deadline = time.monotonic() + SERVER_START_S
    pid = None
    while time.monotonic() < deadline:
        conn = _connect(path)
        if conn is not None:
            return conn
        if pid is None:
            pid = _start_server(path, env)
            if pid is None:
                return None
        else:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done and status != 0:
                return None  # it could not serve: answer in-process
            if done:
                pid = None  # another server held the lock and has gone since: start one again
        time.sleep(0.01)
    return None


def _relay(conn: unix_socket) -> int:
    """Copy stdin to the session and the session to stdout until the server ends it; 0 when it
    ended because stdin did (as a stream process exits after its last answer), 1 otherwise."""
    import select  # built in

    sources: list[object] = [0, conn]
    stdin_done = False
    while True:
        readable, _, _ = select.select(sources, [], [])
        if 0 in readable:
            data = os.read(0, 65536)
            if data:
                conn.sendall(data)
            else:
                conn.shutdown(SHUT_WR)
                sources.remove(0)
                stdin_done = True
        if conn in readable:
            data = conn.recv(65536)
            if not data:
                return 0 if stdin_done else 1
            view = memoryview(data)
            while view:
                view = view[os.write(1, view):]


def stream_through_server(path: str, seam: str, env: dict[str, str] | os._Environ[str]) -> int | None:
    """This stream process's exit code after a session of the warm server answered it, or None
    when no server took the session (stdin untouched: the caller answers in-process)."""
    conn = _await_server(path, env)
    if conn is None:
        return None
    try:
        try:
            conn.sendall(frame(marshal.dumps((seam, dict(env), None))))
            if conn.recv(1) != STREAM_READY:
                return None
        except OSError:
            return None
        try:
            return _relay(conn)
        except OSError:
            return 1  # the session broke, as a stream process that died would
    finally:
        conn.close()


def _in_process(seam: str, raw: bytes) -> tuple[int, str, str]:
    from importlib import import_module

    from brainbench.hooks.program import answer_stdin

    result = answer_stdin(import_module(SEAMS[seam]).handle, raw, os.environ)
    return result.exit_code, result.stdout, result.stderr


def main(argv: list[str]) -> int:
    seam = argv[0].replace("_", "-") if argv else ""
    if seam not in SEAMS or argv[1:] not in ([], ["--stream"]):
        sys.stderr.write(f"usage: python -m brainbench.hooks {{{','.join(SEAMS)}}} [--stream]\n")
        return 64
    serve = os.environ.get("BRAINBENCH_HOOK_SERVE") != "0"
    if argv[1:] == ["--stream"]:
        path = socket_path(os.environ) if serve else None
        if path is not None:
            code = stream_through_server(path, seam, os.environ)
            if code is not None:
                return code
        from importlib import import_module

        from brainbench.hooks.program import main as program_main

        program_main(import_module(SEAMS[seam]).handle, ["--stream"])
    raw = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    answer = None
    if serve:
        path = socket_path(os.environ)
        if path is not None:
            answer = ask_server(path, seam, raw, os.environ)
    code, out, err = answer if answer is not None else _in_process(seam, raw)
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
