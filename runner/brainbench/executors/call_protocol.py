"""The runner's side of the call server protocol (``call_server.py``/``call_server.c``), over any transport.

One request line per call, answered by id; a call past its deadline is cancelled (the
server kills its hook's group) and gets a moment more to answer, so a wedged call still
ends as a timeout.  The transport is the subclass's: an attached ``docker exec``
(``docker/call_client.py``) or a TCP connection to a sidecar's server (``sidecar.py``).
A subclass sends with :meth:`CallChannel.send_line` and feeds every answer line it reads
to :meth:`CallChannel.deliver`, then calls :meth:`CallChannel.reader_ended` when the
stream ends.
"""

from __future__ import annotations

import abc
import itertools
import json
import threading
import time
from collections.abc import Mapping, Sequence

from brainbench.models import bounded_json

from .base import HookCall, HookOutcome
from .call_files import CallFiles
from .limits import MAX_OUTPUT_BYTES, OutputLimitExceeded, decode_stream_text, oversize_outcome

# After a cancel request, how long the server has to report the killed call.
CANCEL_GRACE_S = 2.0


class CallServerError(RuntimeError):
    """The call server could not be started or stopped answering (an infrastructure fault)."""


def _answer(raw: bytes, seam: str) -> dict[str, object]:
    """A call server's answer line as an object; anything else is a :class:`CallServerError`
    (an image can replace the server, so its bytes are parsed like any hook's)."""
    try:
        doc = bounded_json.loads(raw)
    except ValueError as exc:
        raise CallServerError(f"call server of {seam} sent a malformed answer: {exc}") from None
    if not isinstance(doc, dict):
        raise CallServerError(f"call server of {seam} sent an answer that is not a JSON object")
    return doc


class CallChannel(abc.ABC):
    def __init__(self) -> None:
        self._ids = itertools.count(1)
        self._waiting: dict[int, list[bytes | None]] = {}
        self._events: dict[int, threading.Event] = {}
        self._lock = threading.Lock()
        self.alive = False

    @abc.abstractmethod
    def send_line(self, line: bytes) -> None:
        """Write one request line (with its newline) to the server."""

    def deliver(self, line: bytes) -> None:
        try:
            rid = bounded_json.loads(line).get("id")
        except (ValueError, AttributeError):
            return
        with self._lock:
            if rid in self._events:
                self._waiting[rid].append(line)
                self._events[rid].set()

    def reader_ended(self) -> None:
        """The server's stream is over: every waiting call learns it now."""
        self.alive = False
        with self._lock:
            for rid, event in self._events.items():
                self._waiting[rid].append(None)
                event.set()

    def request(self, doc: Mapping[str, object], timeout_s: float, cancel: bool = True) -> bytes | None:
        """The answer line to ``doc``; None if the server died or did not answer in time (a call
        then cancelled, so the server kills its hook; a handshake step has nothing to cancel)."""
        rid = next(self._ids)
        event = threading.Event()
        with self._lock:
            self._events[rid] = event
            self._waiting[rid] = []
        try:
            # ASCII JSON: undecodable stdin bytes travel as surrogate escapes.
            self.send_line(json.dumps({**doc, "id": rid}).encode("ascii") + b"\n")
            if not event.wait(max(timeout_s, 0.0)) and self.alive and cancel:
                self.send_line(json.dumps({"cancel": rid}).encode("ascii") + b"\n")
                event.wait(CANCEL_GRACE_S)
            got = self._waiting[rid]
            return got[0] if got else None
        finally:
            with self._lock:
                self._events.pop(rid, None)
                self._waiting.pop(rid, None)

    def hello(self, timeout_s: float, **fields: object) -> dict[str, object]:
        """The handshake's answer (``{"ready": true, ...}`` or ``{"error": ...}``); {} for none."""
        return self.ask({"hello": True, **fields}, timeout_s)

    def ask(self, doc: Mapping[str, object], timeout_s: float) -> dict[str, object]:
        """The answer to ``doc`` as an object; {} for none (a listen-mode handshake's steps)."""
        answer = self.request(doc, timeout_s, cancel=False)
        try:
            doc = bounded_json.loads(answer) if answer is not None else {}
        except ValueError:
            return {}
        return doc if isinstance(doc, dict) else {}

    def write_files(self, files: CallFiles, timeout_s: float, seam: str) -> None:
        """Copy a call's files in ahead of it (stream mode on a remote engine)."""
        raw = self.request({"write_only": True, **files.as_request()}, timeout_s)
        doc = _answer(raw, seam) if raw is not None else {}
        if not doc.get("written"):
            raise CallServerError(f"call server of {seam} could not write the call's files: "
                                  f"{doc.get('error') or 'no answer'}")

    def run(self, call: HookCall, env: Mapping[str, str], grace_s: float, seam: str,
            files: CallFiles | None = None, argv: Sequence[str] | None = None) -> HookOutcome:
        """One hook call (or, with ``argv``, another command of the image, for a server whose
        handshake said ``"argv": true``): a fresh process on the server's side, graded like any exec."""
        started = time.perf_counter()
        request = {"env": dict(env), "timeout_s": max(call.timeout_s, 0.001),
                   "cap": MAX_OUTPUT_BYTES, "stdin": call.payload.decode("utf-8", "surrogateescape"),
                   "cwd": call.cwd, **(files.as_request() if files else {}), **({"argv": list(argv)} if argv else {})}
        raw = self.request(request, call.timeout_s + grace_s)
        elapsed = (time.perf_counter() - started) * 1000
        if raw is None:
            # Dead or wedged server: what ran is unknown, so nothing is graded as the hook's.
            raise CallServerError(f"call server of {seam} stopped answering")
        doc = _answer(raw, seam)
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
