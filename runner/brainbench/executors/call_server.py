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
written before the hook starts (``"write_only": true`` writes and runs nothing), and ``"argv":
[...]`` runs that command instead of the hook, the same way (the runner's other commands of the
image: the seed contract's init, seed, write_back and operations); the first request ``{"id": 0,
"hello": true}`` is the handshake, answered with ``"argv": true`` (this server runs such commands).
Response: ``{"id", "exit_code", "stdout", "stderr", "timed_out", "oversize", "run_ms"}``, plus
``infra_error`` when the call could not start where asked.

Listen mode (``call_server.py --listen HOST:PORT [--token-file FILE] -- HOOK [ARG...]``) serves
the same protocol over TCP, for a seam that runs as a container of its own beside the runner
(a Kubernetes pod's sidecar; executors/sidecar.py).  Every container of a pod shares the
loopback network, so a hook of another seam could connect too, or bind this port once this
server is gone.  So each side proves it holds this seam's token (``--token-file``, else
``BRAINBENCH_CALL_TOKEN``, which is removed from the environment hooks inherit) without
sending it, the server first, so the runner proves nothing to a stranger on the port:

    client: {"id": 0, "hello": true, "nonce": CN}
    server: {"id": 0, "challenge": SN, "proof": HMAC(token, "brainbench-call-server|CN|SN")}
    client: {"id": 1, "auth": HMAC(token, "brainbench-call-client|CN|SN")}    (only if the proof holds)
    server: {"id": 1, "ready": true, "argv": true, "pid": ...}

(HMAC-SHA256 in hex; nonces of 16 to 128 hex digits).  Anything else is refused and the
connection closed, within ``HELLO_TIMEOUT_S``; at most ``MAX_PENDING`` connections wait to
authenticate, a new one cutting the oldest off.  One authenticated client is served at a time,
and when it goes, its calls are killed.  A call that gets no thread (the container at its pids
limit, which only its hooks fill) is answered as a hook that could not start, and the server
lives on.

Deliberately stdlib-only and free of BrainBench imports: this file's source is what runs
in the container.  Keep it compatible with old interpreters (no annotations at runtime).
"""

import hashlib
import hmac
import json
import os
import secrets
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time

ARGV_ENV = "BRAINBENCH_CALL_ARGV"
TOKEN_ENV = "BRAINBENCH_CALL_TOKEN"
# Listen mode: how long a new connection has to authenticate, its handshake lines' size, and
# how many connections may be authenticating at once.
HELLO_TIMEOUT_S = 5.0
HELLO_MAX_BYTES = 4096
MAX_PENDING = 8
SERVER_ROLE = "brainbench-call-server"
CLIENT_ROLE = "brainbench-call-client"
HEX = frozenset("0123456789abcdef")
NOT_STARTED = "cannot start hook: the call server got no thread for it (the container is at its process limit)\n"


def proof(token, role, client_nonce, server_nonce):
    """HMAC-SHA256 of ``role|client_nonce|server_nonce`` under the seam's token, in hex."""
    message = "|".join((role, client_nonce, server_nonce)).encode("ascii")
    return hmac.new(token, message, hashlib.sha256).hexdigest()


def nonce_ok(nonce):
    return isinstance(nonce, str) and 16 <= len(nonce) <= 128 and set(nonce) <= HEX


def not_started(rid):
    """The answer to a call that got no thread: a hook that could not start (exit 127)."""
    return {"id": rid, "exit_code": 127, "stdout": "", "stderr": NOT_STARTED, "timed_out": False, "oversize": None,
            "run_ms": 0.0}


def start_thread(target, *args):
    """Start a daemon thread; False when none can be had (RuntimeError at the pids limit)."""
    try:
        threading.Thread(target=target, args=args, daemon=True).start()
    except RuntimeError:
        return False
    return True


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


ARGV_REFUSED = "call server: argv must be a non-empty list of strings"


def run_call(argv, request, session=None):
    if "argv" in request:
        argv = request["argv"]
        if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)):
            return {"exit_code": None, "stdout": "", "stderr": "", "timed_out": False, "oversize": None,
                    "run_ms": 0.0, "error": ARGV_REFUSED}
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
    if not (start_thread(_feed, proc.stdin, data) and start_thread(_kill_group_on_exit, proc.pid)):
        _kill_group(proc.pid)
        session.calls.pop(request.get("id"), None)
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            stream.close()
        answer = not_started(request.get("id"))
        answer.pop("id")
        return answer
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
            session.send({"id": request.get("id"), "ready": True, "argv": True, "pid": os.getpid()})
            continue
        if not start_thread(_serve_one, argv, request, session):
            session.send(not_started(request.get("id")))


def _read_line(conn, buffer, deadline):
    """The next line of a connection still authenticating, within the deadline and size: (line or None, rest)."""
    try:
        while b"\n" not in buffer and len(buffer) <= HELLO_MAX_BYTES:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None, b""
            conn.settimeout(remaining)
            chunk = conn.recv(HELLO_MAX_BYTES)
            if not chunk:
                return None, b""
            buffer += chunk
    except OSError:  # socket.timeout included, and a shutdown by the pending cap
        return None, b""
    line, sep, rest = buffer.partition(b"\n")
    if not sep or len(line) > HELLO_MAX_BYTES:
        return None, b""
    return line, rest


def _handshake_line(conn, buffer, deadline):
    """(request or {}, rest) for the next handshake line."""
    line, rest = _read_line(conn, buffer, deadline)
    try:
        return (_parse(line) if line is not None else {}), rest
    except ValueError:
        return {}, rest


class Listener:
    """Listen mode: authenticate each connection, serve one client at a time."""

    def __init__(self, argv, token):
        self.argv = argv
        self.token = token.encode("utf-8")
        self.lock = threading.Lock()
        self.busy = False
        self.pending = []  # connections still authenticating, oldest first

    def _refuse(self, conn, rid, why="unauthorized"):
        conn.sendall((json.dumps({"id": rid, "error": why}) + "\n").encode("ascii"))

    def _authenticate(self, conn):
        """(the ready answer's id, bytes already read) for a client that proved the token; None otherwise."""
        deadline = time.monotonic() + HELLO_TIMEOUT_S
        hello, rest = _handshake_line(conn, b"", deadline)
        client_nonce = hello.get("nonce")
        if not hello.get("hello") or not nonce_ok(client_nonce):
            self._refuse(conn, hello.get("id"))
            return None
        server_nonce = secrets.token_hex(16)
        conn.sendall((json.dumps({"id": hello.get("id"), "challenge": server_nonce,
                                  "proof": proof(self.token, SERVER_ROLE, client_nonce, server_nonce)}) + "\n")
                     .encode("ascii"))
        auth, rest = _handshake_line(conn, rest, deadline)
        given = str(auth.get("auth") or "").encode("utf-8", "surrogateescape")
        if not hmac.compare_digest(given, proof(self.token, CLIENT_ROLE, client_nonce, server_nonce).encode()):
            self._refuse(conn, auth.get("id"))
            return None
        return auth.get("id"), rest

    def handle(self, conn):
        try:
            try:
                authenticated = self._authenticate(conn)
            finally:
                self._settled(conn)
            if authenticated is None:
                return
            rid, rest = authenticated
            with self.lock:
                busy, self.busy = self.busy, True
            if busy:
                self._refuse(conn, rid, "busy: another client is connected")
                return
            try:
                conn.settimeout(None)
                session = Session(conn.sendall)
                session.send({"id": rid, "ready": True, "argv": True, "pid": os.getpid()})
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

    def _admit(self, conn):
        """A new connection waits to authenticate; at the cap the oldest waiting one is cut off."""
        with self.lock:
            if len(self.pending) >= MAX_PENDING:
                oldest = self.pending.pop(0)
                try:
                    oldest.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.pending.append(conn)

    def _settled(self, conn):
        with self.lock:
            if conn in self.pending:
                self.pending.remove(conn)

    def run(self, host, port):
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server = socket.socket(family, socket.SOCK_STREAM)
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, port))
        server.listen(16)
        sys.stderr.write(f"call server: listening on {host}:{server.getsockname()[1]}\n")
        sys.stderr.flush()
        while True:
            try:
                conn, _ = server.accept()
            except OSError:  # out of descriptors (EMFILE) or an aborted connection: the server goes on
                time.sleep(0.01)
                continue
            self._admit(conn)
            if not start_thread(self.handle, conn):
                # No thread (the container at its pids limit): this connection is dropped, the server goes on.
                self._settled(conn)
                conn.close()
                time.sleep(0.01)


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
