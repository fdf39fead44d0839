"""The in-container call server: exec semantics for every call without a ``docker exec`` per call.

Started once per seam container over an attached exec: ``python3 -c BOOT`` reads this
file's source as its first stdin line and runs it, with the hook's argv in
``BRAINBENCH_CALL_ARGV`` (JSON).  Nothing is copied into the image, so it runs in any
image with a Python 3 interpreter, read-only rootfs included, and ``ps`` in the
container shows the hooks, not our source.  It reads one request per line on stdin and, for each,
fork-execs the hook command as a fresh process in its own session and process group,
with the request's stdin bytes and environment, as a harness would; it enforces the
timeout and the output cap, kills the whole group when the hook is done (or over time,
or over the cap), and writes one response line.  Calls run concurrently, one thread each.

Framing is the stream codec's: one JSON object per line, answers matched by ``id``.
Request: ``{"id", "env", "stdin", "cwd", "timeout_s", "cap"}`` (``stdin`` as text, undecodable
bytes as surrogate escapes), on a remote engine also ``{"files": {path: text}, "dirs": [...]}``
written before the hook starts (``"write_only": true`` writes and runs nothing); the first
request ``{"id": 0, "hello": true}`` is the handshake.  Response: ``{"id", "exit_code", "stdout",
"stderr", "timed_out", "oversize", "run_ms"}``, plus ``infra_error`` when the call could not
start where asked.

Listen mode (``call_server.py --listen HOST:PORT [--token-file FILE] -- HOOK [ARG...]``) serves
the same protocol over TCP, for a seam that runs as a container of its own beside the runner
(a Kubernetes pod's sidecar; executors/sidecar.py).  Every container of a pod shares the
loopback network, so a hook of another seam could connect too: the first line must be the
``hello`` carrying this seam's token (``--token-file``, else ``BRAINBENCH_CALL_TOKEN``, which is
removed from the environment hooks inherit), anything else is refused and the connection
closed; one authenticated client is served at a time, and when it goes, its calls are killed.

Deliberately stdlib-only and free of BrainBench imports: this file's source is what runs
in the container.  Keep it compatible with old interpreters (no annotations at runtime).
"""

import hmac
import json
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

ARGV_ENV = "BRAINBENCH_CALL_ARGV"
TOKEN_ENV = "BRAINBENCH_CALL_TOKEN"
# Listen mode: how long a new connection has to authenticate, and its hello line's size.
HELLO_TIMEOUT_S = 5.0
HELLO_MAX_BYTES = 4096


class Session:
    """One client: where answers go, and the calls it started (for cancel and hang-up)."""

    def __init__(self, write):
        self.write = write
        self.lock = threading.Lock()
        self.calls = {}  # request id -> running hook process
        self.cancelled = set()
        self.open = True

    def send(self, doc):
        # ASCII JSON: undecodable hook output travels as surrogate escapes (\udcXX), never as
        # raw bytes that would make the line itself invalid UTF-8.
        line = (json.dumps(doc) + "\n").encode("ascii")
        with self.lock:
            if not self.open:
                return  # its client hung up: a late answer goes nowhere, never to the next client
            try:
                self.write(line)
            except OSError:
                self.open = False

    def register(self, rid, proc):
        # Under the lock hang_up takes: a call whose hook started while its client hung up is
        # either in the calls hang_up kills, or sees the session closed here and dies now.
        with self.lock:
            self.calls[rid] = proc
            gone = not self.open
        if gone:
            self.cancel(rid)

    def cancel(self, rid):
        self.cancelled.add(rid)
        proc = self.calls.get(rid)
        if proc is not None:
            _kill_group(proc.pid)

    def hang_up(self):
        with self.lock:
            self.open = False
            running = list(self.calls)
        for rid in running:
            self.cancel(rid)


def _kill_children():
    """Kill every process this server started, registered in a session's calls or not yet.

    In listen mode one client is served at a time, so when it hangs up every hook still running
    is its own or an earlier client's.  A hook whose Popen has not returned yet is in no
    session's table (its registration will see the closed session and kill it, but only once
    Popen returns, which under load can take seconds): found here by its parent pid instead."""
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if fields[1] == me:  # the parent pid
            pid = int(entry)
            _kill_group(pid)
            try:
                os.kill(pid, signal.SIGKILL)  # one that has not called setsid() yet has no group
            except OSError:
                pass


def _stdout_write(line):
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


def _kill_group_on_exit(pid):
    # Wait for the hook without reaping it (its pid, and so its group id, stays reserved),
    # then kill what is left of its group: a leaked child holding stdout ends the call.
    try:
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
    except (OSError, AttributeError):
        return
    _kill_group(pid)


def _feed(stream, data):
    try:
        if data:
            stream.write(data)
        stream.close()
    except OSError:
        pass  # the hook exited without reading all of stdin; its output still counts


def write_files(request):
    # A remote engine cannot see the runner's files: the call carries what its hook will
    # read (transcripts) and the server puts it at the same absolute path, on the tmpfs the
    # container has there, replacing the previous turn's copy atomically.
    for directory in request.get("dirs") or ():
        os.makedirs(str(directory), mode=0o700, exist_ok=True)
    for path, text in (request.get("files") or {}).items():
        path = str(path)
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        temp = path + ".bb-tmp"
        with open(temp, "wb") as handle:
            handle.write(str(text).encode("utf-8", "surrogateescape"))
        os.replace(temp, path)


def run_call(argv, request, session=None):
    session = session or Session(_stdout_write)
    started = time.monotonic()
    write_files(request)
    env = dict(os.environ)
    env.update({str(k): str(v) for k, v in (request.get("env") or {}).items()})
    cap = int(request.get("cap") or 1024 * 1024)
    deadline = started + float(request.get("timeout_s") or 30.0)
    data = str(request.get("stdin") or "").encode("utf-8", "surrogateescape")
    cwd = request.get("cwd") or None
    if cwd is not None and not (os.path.isdir(cwd) and os.access(cwd, os.X_OK)):
        # Not the hook's failure: a harness could not have started it there either.
        return {"exit_code": None, "stdout": "", "stderr": "", "timed_out": False, "oversize": None,
                "run_ms": 0.0, "infra_error": f"cannot enter cwd {cwd}"}
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=env, cwd=cwd, start_new_session=True)
    except OSError as exc:
        return {"exit_code": 127, "stdout": "", "stderr": f"cannot start hook: {exc}\n", "timed_out": False,
                "oversize": None, "run_ms": 0.0}
    session.register(request.get("id"), proc)
    threading.Thread(target=_feed, args=(proc.stdin, data), daemon=True).start()
    threading.Thread(target=_kill_group_on_exit, args=(proc.pid,), daemon=True).start()
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out_fd: bytearray(), err_fd: bytearray()}
    names = {out_fd: "stdout", err_fd: "stderr"}
    selector = selectors.DefaultSelector()
    for stream in (proc.stdout, proc.stderr):
        selector.register(stream, selectors.EVENT_READ)
    timed_out, oversize = False, None
    # The call is over when both pipes close, like a harness: a leaked child holding
    # stdout is a timeout, not a hang; once the hook itself exits, its group is killed.
    while selector.get_map() and oversize is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        for key, _ in selector.select(remaining):
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                continue
            buffer = buffers[key.fd]
            if len(buffer) + len(chunk) > cap:
                oversize = f"{names[key.fd]} over {cap} bytes"
                break
            buffer += chunk
    _kill_group(proc.pid)
    session.calls.pop(request.get("id"), None)  # before the reap: a cancel must not signal a reused pid
    proc.wait()
    if request.get("id") in session.cancelled:
        session.cancelled.discard(request.get("id"))
        timed_out = True  # the host gave up on it: a timeout, its output discarded
    selector.close()
    for stream in (proc.stdout, proc.stderr):
        stream.close()
    run_ms = (time.monotonic() - started) * 1000
    if timed_out or oversize:
        return {"exit_code": None, "stdout": "", "stderr": "", "timed_out": timed_out, "oversize": oversize,
                "run_ms": run_ms}
    return {"exit_code": proc.returncode,
            "stdout": bytes(buffers[out_fd]).decode("utf-8", "surrogateescape"),
            "stderr": bytes(buffers[err_fd]).decode("utf-8", "surrogateescape"),
            "timed_out": False, "oversize": None, "run_ms": run_ms}


def _serve_one(argv, request, session):
    try:
        if request.get("write_only"):
            write_files(request)
            answer = {"written": True}
        else:
            answer = run_call(argv, request, session)
    except Exception as exc:  # the server must answer every request it accepted
        answer = {"exit_code": None, "stdout": "", "stderr": "", "timed_out": False, "oversize": None,
                  "run_ms": 0.0, "error": f"call server: {type(exc).__name__}: {exc}"}
    answer["id"] = request.get("id")
    session.send(answer)


def _parse(line):
    request = json.loads(line.decode("utf-8", "surrogateescape"))
    if not isinstance(request, dict):
        raise ValueError("request is not an object")
    return request


def serve(argv, lines, session):
    """Answer every request line of ``lines`` on ``session``; returns when they end."""
    for line in lines:
        if not line.strip():
            continue
        try:
            request = _parse(line)
        except ValueError as exc:
            session.send({"id": -1, "error": f"bad request: {exc}"})
            continue
        if "cancel" in request:
            # The host's deadline passed before ours (it never should): kill that call now.
            session.cancel(request["cancel"])
            continue
        if request.get("hello"):
            session.send({"id": request.get("id"), "ready": True, "pid": os.getpid()})
            continue
        threading.Thread(target=_serve_one, args=(argv, request, session), daemon=True).start()


def _read_hello(conn):
    """The first line of a new connection, within the deadline and size; None if there is none."""
    conn.settimeout(HELLO_TIMEOUT_S)
    data = b""
    deadline = time.monotonic() + HELLO_TIMEOUT_S
    try:
        while b"\n" not in data and len(data) <= HELLO_MAX_BYTES and time.monotonic() < deadline:
            chunk = conn.recv(HELLO_MAX_BYTES)
            if not chunk:
                return None, b""
            data += chunk
    except OSError:  # socket.timeout included
        return None, b""
    if b"\n" not in data:
        return None, b""
    line, rest = data.split(b"\n", 1)
    return line, rest


class Listener:
    """Listen mode: authenticate each connection, serve one client at a time."""

    def __init__(self, argv, token):
        self.argv = argv
        self.token = token.encode("utf-8")
        self.lock = threading.Lock()
        self.busy = False

    def handle(self, conn):
        try:
            line, rest = _read_hello(conn)
            try:
                hello = _parse(line) if line is not None else {}
            except ValueError:
                hello = {}
            rid = hello.get("id")
            given = str(hello.get("token") or "").encode("utf-8", "surrogateescape")
            if not hello.get("hello") or not hmac.compare_digest(given, self.token):
                conn.sendall((json.dumps({"id": rid, "error": "unauthorized"}) + "\n").encode("ascii"))
                return
            with self.lock:
                busy, self.busy = self.busy, True
            if busy:
                conn.sendall((json.dumps({"id": rid, "error": "busy: another client is connected"}) + "\n")
                             .encode("ascii"))
                return
            try:
                conn.settimeout(None)
                session = Session(conn.sendall)
                session.send({"id": rid, "ready": True, "pid": os.getpid()})
                try:
                    serve(self.argv, _socket_lines(conn, rest), session)
                finally:
                    session.hang_up()
                    _kill_children()
            finally:
                with self.lock:
                    self.busy = False
        except OSError:
            pass
        finally:
            try:
                conn.close()
            except OSError:
                pass

    def run(self, host, port):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server = socket.socket(family, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, port))
        server.listen(16)
        sys.stderr.write(f"call server: listening on {host}:{server.getsockname()[1]}\n")
        sys.stderr.flush()
        while True:
            conn, _ = server.accept()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()


def _socket_lines(conn, rest):
    buffer = rest
    while True:
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            yield line
        try:
            chunk = conn.recv(65536)
        except OSError:
            return
        if not chunk:
            return
        buffer += chunk


def _listen_options(args):
    """``--listen HOST:PORT [--token-file FILE] -- HOOK...`` -> (host, port, token, hook argv)."""
    if "--" not in args:
        raise ValueError("the hook command goes after --")
    options, hook = args[:args.index("--")], args[args.index("--") + 1:]
    values = {options[i]: options[i + 1] for i in range(0, len(options) - 1, 2)}
    if len(options) % 2 or set(values) - {"--listen", "--token-file"}:
        raise ValueError(f"unknown options {' '.join(options)}")
    host, sep, port = values["--listen"].rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"--listen wants HOST:PORT, got {values['--listen']!r}")
    token = os.environ.pop(TOKEN_ENV, "")  # never handed on to a hook
    if "--token-file" in values:
        with open(values["--token-file"], "rb") as handle:
            token = handle.read().decode("utf-8").strip()
    if not token:
        raise ValueError(f"no token: give --token-file FILE or {TOKEN_ENV}")
    if not hook:
        raise ValueError("no hook command after --")
    return host.strip("[]") or "127.0.0.1", int(port), token, hook


def main(argv):
    if argv and argv[0] == "--listen":
        try:
            host, port, token, hook = _listen_options(argv)
        except (ValueError, OSError) as exc:
            sys.stderr.write(f"call server: {exc}\nusage: call_server.py --listen HOST:PORT "
                             "[--token-file FILE] -- HOOK [ARG...]\n")
            return 64
        Listener(hook, token).run(host, port)
        return 0
    argv = argv or json.loads(os.environ.pop(ARGV_ENV, "[]"))
    if not argv:
        sys.stderr.write("usage: call_server.py HOOK [ARG...]\n")
        return 64
    serve(argv, sys.stdin.buffer, Session(_stdout_write))
    return 0


if __name__ == "__main__":
    # Under ``python -c BOOT`` sys.argv is ["-c"]: the hook's argv then comes from the env.
    sys.exit(main(sys.argv[1:] if sys.argv[0] != "-c" else []))
