"""Exec mode through the in-container call server (``executors/call_server.py``).

One attached exec per seam container runs the call server; every hook call is one
request line on it, answered by id, so a call costs a line each way instead of the
Engine API round trips of a ``docker exec`` (create, attach, inspect).  The hook still
runs as a fresh process per call, exactly as under ``docker exec``.

Two servers speak the same protocol: ``call_server.py`` run by the image's own Python 3
(its source streamed in at start), and, for images without Python, the static binary built
from ``call_server.c`` and bind-mounted read-only (``static_helper``).  Where neither can
run, the seam falls back to ``docker exec`` per call (``exec_call``).
"""

from __future__ import annotations

import itertools
import json
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..base import HookCall, HookOutcome
from ..limits import MAX_OUTPUT_BYTES, LineSplitter, OutputLimitExceeded, decode_stream_text, oversize_outcome
from .attach import STDOUT, HijackedExec
from .remote_files import CallFiles
from .static_helper import TARGET as STATIC_SERVER

if TYPE_CHECKING:
    from .container import SeamContainer

log = logging.getLogger(__name__)

SOURCE = (Path(__file__).resolve().parents[1] / "call_server.py").read_text()
# The interpreter reads the server's source as its first stdin line (JSON-encoded).
BOOT = "import json,sys;exec(compile(json.loads(sys.stdin.buffer.readline()),'call_server','exec'))"
PIDFILE = "/tmp/.brainbench-call-server.pid"
# Records the server's pid so the host can kill it (and the hooks it runs are their own groups).
WRAPPER = 'echo "$$" > "$0"; for py in python3 python; do command -v "$py" >/dev/null 2>&1 && exec "$py" "$@"; done; ' \
          'echo "no python3 in the image" >&2; exit 127'
STATIC_WRAPPER = 'echo "$$" > "$0"; exec "$@"'


# After a cancel request, how long the server has to report the killed call.
CANCEL_GRACE_S = 2.0


class CallServerError(RuntimeError):
    """The call server could not be started or stopped answering (an infrastructure fault)."""


class CallServer:
    def __init__(self, seam: SeamContainer, variant: str = "python") -> None:
        self.seam = seam
        # "python": call_server.py on the image's interpreter; "static": the mounted binary.
        self.variant = variant
        self.handle: HijackedExec | None = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, list[bytes | None]] = {}
        self._events: dict[int, threading.Event] = {}
        self._lock = threading.Lock()
        self.alive = False
        self.stderr_tail = b""

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self, handshake_s: float, in_call: bool = False) -> None:
        seam = self.seam
        api = seam.executor.api
        if self.variant == "static":
            cmd, env = ["/bin/sh", "-c", STATIC_WRAPPER, PIDFILE, STATIC_SERVER, *seam.hook_cmd], seam.base_env
        else:
            cmd = ["/bin/sh", "-c", WRAPPER, PIDFILE, "-c", BOOT]
            env = {**seam.base_env, "BRAINBENCH_CALL_ARGV": json.dumps(seam.hook_cmd)}
        exec_id = seam.create_exec(cmd, env, in_call=in_call)
        self.handle = HijackedExec.start(api.host, api.api_version, exec_id)
        if self.variant == "python":
            self.handle.send(json.dumps(SOURCE).encode() + b"\n")
        self.alive = True
        threading.Thread(target=self._read, name="bb-call-server", daemon=True).start()
        answer = self._request({"hello": True}, handshake_s)
        if answer is None or not json.loads(answer).get("ready"):
            self.close()
            why = self.stderr_tail.decode("utf-8", "replace").strip() or "no answer"
            raise CallServerError(f"{self.variant} call server did not start in {seam.image_ref}: {why}")

    def close(self) -> None:
        self.alive = False
        if self.handle is not None:
            self.handle.close_write()
            self.handle.close()
        self.seam.kill_by_pidfile(PIDFILE)

    def _read(self) -> None:
        assert self.handle is not None
        lines = LineSplitter()
        try:
            while (frame := self.handle.read_frame(None)) is not None:
                stream, data = frame
                if stream != STDOUT:
                    self.stderr_tail = (self.stderr_tail + data)[-4096:]
                    continue
                for line in lines.feed(data):
                    self._deliver(line)
        except Exception as exc:  # closed under us, or a line over the cap: either way it is done
            log.debug("call server reader ended: %s", exc)
        finally:
            self.alive = False
            with self._lock:
                for rid, event in self._events.items():
                    self._waiting[rid].append(None)
                    event.set()

    def _deliver(self, line: bytes) -> None:
        try:
            rid = json.loads(line).get("id")
        except (ValueError, AttributeError):
            return
        with self._lock:
            if rid in self._events:
                self._waiting[rid].append(line)
                self._events[rid].set()

    def _request(self, doc: dict[str, object], timeout_s: float) -> bytes | None:
        """The answer line to ``doc``; None if the server died or did not answer in time.

        Past ``timeout_s`` the server is asked to cancel the call (kill its hook's group) and
        gets a moment more to answer, so a wedged call still ends as a timeout.
        """
        rid = next(self._ids)
        event = threading.Event()
        with self._lock:
            self._events[rid] = event
            self._waiting[rid] = []
        try:
            assert self.handle is not None
            # ASCII JSON: undecodable stdin bytes travel as surrogate escapes.
            self.handle.send(json.dumps({**doc, "id": rid}).encode("ascii") + b"\n")
            if not event.wait(max(timeout_s, 0.0)) and self.alive:
                self.handle.send(json.dumps({"cancel": rid}).encode("ascii") + b"\n")
                event.wait(CANCEL_GRACE_S)
            got = self._waiting[rid]
            return got[0] if got else None
        finally:
            with self._lock:
                self._events.pop(rid, None)
                self._waiting.pop(rid, None)

    # -- calls -------------------------------------------------------------------------------
    def write_files(self, files: CallFiles) -> None:
        """Copy a call's files in ahead of it (stream mode on a remote engine)."""
        raw = self._request({"write_only": True, **files.as_request()}, self.seam.executor.limits.call_grace_s)
        doc = json.loads(raw) if raw is not None else {}
        if not doc.get("written"):
            raise CallServerError(f"call server of {self.seam.seam} could not write the call's files: "
                                  f"{doc.get('error') or 'no answer'}")

    def call(self, call: HookCall, files: CallFiles | None = None) -> HookOutcome:
        seam = self.seam
        started = time.perf_counter()
        request = {"env": seam.executor.container_env(call.env), "timeout_s": max(call.timeout_s, 0.001),
                   "cap": MAX_OUTPUT_BYTES, "stdin": call.payload.decode("utf-8", "surrogateescape"),
                   "cwd": call.cwd, **(files.as_request() if files else {})}
        raw = self._request(request, call.timeout_s + seam.executor.limits.call_grace_s)
        elapsed = (time.perf_counter() - started) * 1000
        if raw is None:
            # Dead or wedged server: what ran is unknown, so nothing is graded as the hook's.
            raise CallServerError(f"call server of {seam.seam} stopped answering")
        doc = json.loads(raw)
        if doc.get("error"):
            raise CallServerError(str(doc["error"]))
        if doc.get("infra_error"):  # the call could not start as a harness would start it
            return HookOutcome(None, b"", b"", False, elapsed, infra_error=str(doc["infra_error"]))
        if doc.get("timed_out"):
            return HookOutcome(None, b"", b"", True, elapsed)
        if doc.get("oversize"):
            name = str(doc["oversize"]).split(" ", 1)[0]
            return oversize_outcome(OutputLimitExceeded(name, MAX_OUTPUT_BYTES), elapsed)
        return HookOutcome(int(doc["exit_code"]), decode_stream_text(doc.get("stdout", "")),
                           decode_stream_text(doc.get("stderr", "")), False, elapsed)
