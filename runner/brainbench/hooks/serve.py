"""The warm hook server: answers our hook programs' exec-mode calls from one warm process.

A real harness starts the hook command afresh for every prompt, and our hook
programs would spend most of each call importing (psycopg alone ≈ 0.25 s).
gbrain's own Claude Code hook has the same problem and the same answer: the hook
"never opens the database", it asks a running ``gbrain serve`` over a Unix socket
(shared/reference/gbrain-production-hooks.md).  So ``python -m brainbench.hooks
SEAM`` is a thin client that hands its raw stdin and environment to this server
and prints the answer; the hook process itself is still fresh for every call.

One server per (user, code, interpreter, working directory, libpq environment),
found by a socket path derived from all of them (see ``hooks/__main__.py``), so a
server never answers for code or settings other than its clients'.  It is
started detached by the first client that finds none, answers on a small thread
pool (a brain connection per call in flight, closed when the call is answered,
as an exec-mode hook process holds one), and exits after ``idle_s`` seconds without a call or when its socket file
is removed.  Handlers run exactly as in exec mode (``program.answer_stdin``)
with the client's environment, so the bytes on the wire are the same.

A stream-mode client (``python -m brainbench.hooks SEAM --stream``) opens a
*stream session* instead: its stdin and stdout are relayed over the connection,
and a thread of its own answers the lines with ``program.serve_stream``, keeping
one brain connection for the session as a stream process keeps one.  So a run's
stream processes are still processes of their own, started and killed by the
runner, without each importing the whole hook stack (≈ 0.4 CPU-s apiece).

Client and server speak length-prefixed ``marshal`` (built in, so the client
imports nothing for it): both are the same interpreter (it is part of the
socket's key) and the socket is private to the user (0600 in a 0700 directory).

Usage (by the client, not by hand): python -m brainbench.hooks.serve SOCKET IDLE_S
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import marshal
import os
import socket
import stat
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import import_module

from brainbench import collector
from brainbench.hooks.ipc import SEAM_MODULES, STREAM_READY, frame
from brainbench.hooks.program import MAX_STDIN_BYTES, Handler, answer_stdin, serve_stream

# stdin (at most 4 MiB + 1) plus the client's environment.
MAX_REQUEST_BYTES = MAX_STDIN_BYTES + 8 * 1024 * 1024
WORKERS = 6
# A client that stops sending mid-request must not hold a worker forever.
CLIENT_IO_TIMEOUT_S = 60.0


def _read_request(conn: socket.socket) -> tuple[str, dict[str, str], bytes | None]:
    """(seam, env, stdin) of an exec call; stdin is None for a stream session."""
    reader = conn.makefile("rb")
    size = int.from_bytes(reader.read(8), "big")
    if not 0 < size <= MAX_REQUEST_BYTES:
        raise ValueError(f"request size {size} out of range")
    payload = reader.read(size)
    if len(payload) != size:
        raise ValueError("short request")
    seam, env, raw = marshal.loads(payload)
    if raw is not None and len(raw) > MAX_STDIN_BYTES + 1:
        raise ValueError("stdin over the client's read limit")
    return str(seam), {str(k): str(v) for k, v in env.items()}, None if raw is None else bytes(raw)


def check_cwd(cwd: str) -> None:
    """Raise the OSError ``chdir(cwd)`` would: one process serves many sessions, so it cannot
    enter each request's cwd, but it must refuse the same requests a process of its own would."""
    info = os.stat(cwd)
    if not stat.S_ISDIR(info.st_mode):
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), cwd)
    if not os.access(cwd, os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), cwd)


class HookServer:
    def __init__(self, path: str, idle_s: float) -> None:
        self.path = path
        self.idle_s = idle_s
        self.handlers: dict[str, Handler] = {}
        self.active = 0
        self.last_call = time.monotonic()
        self.lock = threading.Lock()

    def answer(self, conn: socket.socket) -> None:
        from brainbench.hooks import brain_access

        handed_off = False
        try:
            conn.settimeout(CLIENT_IO_TIMEOUT_S)
            try:
                seam, env, raw = _read_request(conn)
                handler = self.handlers[seam]
                if raw is None:
                    threading.Thread(target=self._stream_session, args=(conn, handler, env), daemon=True,
                                     name=f"stream-{seam}").start()
                    handed_off = True  # the session's now, and so is its place in ``active``
                    return
                try:
                    result = answer_stdin(handler, raw, env)
                finally:
                    brain_access.close_all()  # no idle connections: the run's budget counts calls in flight
                reply: tuple[object, ...] = (result.exit_code, result.stdout, result.stderr)
            except (OSError, ValueError, KeyError, TypeError, AttributeError, EOFError) as exc:
                # The client falls back to answering in-process; it never shows this.
                reply = (None, f"{exc.__class__.__name__}: {exc}")
            with contextlib.suppress(OSError):
                conn.sendall(frame(marshal.dumps(reply)))
        finally:
            if not handed_off:
                self._done(conn)

    def _stream_session(self, conn: socket.socket, handler: Handler, env: dict[str, str]) -> None:
        from brainbench.hooks import brain_access

        try:
            conn.settimeout(None)  # between calls a stream process waits on its runner for as long as it likes
            with contextlib.suppress(OSError), conn.makefile("rb") as lines:
                conn.sendall(STREAM_READY)
                serve_stream(handler, lines, conn.sendall, env, check_cwd)
        finally:
            brain_access.close_all()  # the session's connection, held as a stream process holds one
            self._done(conn)

    def _done(self, conn: socket.socket) -> None:
        conn.close()
        with self.lock:
            self.active -= 1
            self.last_call = time.monotonic()

    def _still_ours(self, inode: int) -> bool:
        try:
            return os.stat(self.path).st_ino == inode
        except OSError:
            return False

    def run(self) -> int:
        lock_fd = os.open(self.path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0  # another server for this key is starting or running
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a dead server's socket: its lock was free
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        os.chmod(self.path, 0o600)
        inode = os.stat(self.path).st_ino
        # Listening before the imports: the clients that started this server wait in the backlog
        # rather than polling for a socket.  Only now the hook stack (≈ 0.4 CPU-s): clients that
        # find no server each start one, and all but the first exit above without paying for it.
        listener.listen(64)
        collector.defer()
        self.handlers = {name: import_module(module).handle for name, module in SEAM_MODULES.items()}
        collector.resume()
        listener.settimeout(0.5)
        with ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="hook") as pool:
            try:
                while True:
                    try:
                        conn, _ = listener.accept()
                    except TimeoutError:
                        with self.lock:
                            idle = self.active == 0 and time.monotonic() - self.last_call > self.idle_s
                        if idle or not self._still_ours(inode):
                            break
                        continue
                    with self.lock:
                        self.active += 1
                    pool.submit(self.answer, conn)
            finally:
                listener.close()
                if self._still_ours(inode):
                    os.unlink(self.path)
        return 0


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write("usage: python -m brainbench.hooks.serve SOCKET IDLE_S\n")
        return 64
    return HookServer(argv[0], float(argv[1])).run()


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
