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

Deliberately stdlib-only and free of BrainBench imports: this file's source is what runs
in the container.  Keep it compatible with old interpreters (no annotations at runtime).
"""

import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time

WRITE_LOCK = threading.Lock()
CALLS = {}  # request id -> running hook process, for cancel requests
CANCELLED = set()
ARGV_ENV = "BRAINBENCH_CALL_ARGV"


def _send(doc):
    # ASCII JSON: undecodable hook output travels as surrogate escapes (\udcXX), never as
    # raw bytes that would make the line itself invalid UTF-8.
    line = (json.dumps(doc) + "\n").encode("ascii")
    with WRITE_LOCK:
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


def run_call(argv, request):
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
    CALLS[request.get("id")] = proc
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
    proc.wait()
    CALLS.pop(request.get("id"), None)
    if request.get("id") in CANCELLED:
        CANCELLED.discard(request.get("id"))
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


def _serve_one(argv, request):
    try:
        if request.get("write_only"):
            write_files(request)
            answer = {"written": True}
        else:
            answer = run_call(argv, request)
    except Exception as exc:  # the server must answer every request it accepted
        answer = {"exit_code": None, "stdout": "", "stderr": "", "timed_out": False, "oversize": None,
                  "run_ms": 0.0, "error": f"call server: {type(exc).__name__}: {exc}"}
    answer["id"] = request.get("id")
    _send(answer)


def main(argv):
    argv = argv or json.loads(os.environ.pop(ARGV_ENV, "[]"))
    if not argv:
        sys.stderr.write("usage: call_server.py HOOK [ARG...]\n")
        return 64
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            request = json.loads(line.decode("utf-8", "surrogateescape"))
            if not isinstance(request, dict):
                raise ValueError("request is not an object")
        except ValueError as exc:
            _send({"id": -1, "error": f"bad request: {exc}"})
            continue
        if "cancel" in request:
            # The host's deadline passed before ours (it never should): kill that call now.
            CANCELLED.add(request["cancel"])
            proc = CALLS.get(request["cancel"])
            if proc is not None:
                _kill_group(proc.pid)
            continue
        if request.get("hello"):
            _send({"id": request.get("id"), "ready": True, "pid": os.getpid()})
            continue
        threading.Thread(target=_serve_one, args=(argv, request), daemon=True).start()
    return 0


if __name__ == "__main__":
    sys.exit(main([a for a in sys.argv[1:] if a != "-c"]))
