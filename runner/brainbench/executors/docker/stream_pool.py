"""Stream mode in a container: a pool of attached long-lived hook processes.

Each slot is one ``docker exec`` of the hook's ``--stream`` command, speaking the stream
codec of ``models.wire``.  Every slot is started and answers a handshake at ``start``
(warm-up), so no interpreter start-up is charged to a graded call.  A slot that times
out, dies or breaks the protocol is killed and restarted before its next call.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

import anyio

from brainbench.models.stream_codec import HANDSHAKE_INPUT, StreamProtocolError, decode_response, encode_request

from ..base import ExecutorError, HookCall, HookOutcome
from ..limits import (
    MAX_OUTPUT_BYTES,
    LineSplitter,
    OutputLimitExceeded,
    decode_stream_text,
    oversize_outcome,
    stream_handshake_error,
)
from .attach import STDOUT, HijackedExec
from .config import STREAM_PIDFILE
from .container import stream_command
from .failures import ImageContractError, describe

if TYPE_CHECKING:
    from .container import SeamContainer

log = logging.getLogger(__name__)

# Records the stream process pid (per pool slot) so a timeout can kill it.
STREAM_WRAPPER = 'echo "$$" > "$0"; exec "$@"'


class StreamSession:
    """One attached ``--stream`` process: request lines up, response lines down."""

    def __init__(self, handle: HijackedExec, pidfile: str) -> None:
        self.handle = handle
        self.pidfile = pidfile
        self.next_id = 1
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.stderr_tail: deque[bytes] = deque(maxlen=64)
        self.alive = True
        # Set when the process wrote a response line over the cap; the caller kills it.
        self.overflow: OutputLimitExceeded | None = None
        self._reader = threading.Thread(target=self._read, name="bb-stream-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        lines = LineSplitter()
        try:
            while (frame := self.handle.read_frame(None)) is not None:
                stream, data = frame
                if stream != STDOUT:
                    self.stderr_tail.append(data[-4096:])
                    continue
                for line in lines.feed(data):
                    self.lines.put(line)
        except OutputLimitExceeded as exc:
            self.overflow = exc
        except Exception as exc:  # socket closed under us on kill/stop
            log.debug("stream reader ended: %s", exc)
        finally:
            self.alive = False
            self.lines.put(None)

    def request(self, line: bytes, timeout_s: float) -> bytes | None:
        """The next response line; None if the process died; raises TimeoutError."""
        self.handle.send(line)
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            try:
                raw = self.lines.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError from None
            if raw is None or raw.strip():
                return raw

    def stderr_text(self) -> str:
        return b"".join(self.stderr_tail)[-2000:].decode("utf-8", "replace").strip()

    def close(self) -> None:
        self.alive = False
        self.handle.close_write()
        self.handle.close()


class StreamPool:
    def __init__(self, seam: SeamContainer, size: int) -> None:
        self.seam = seam
        # Idle sessions (None = slot not started yet), handed out in the event loop
        # thread, so no lock is needed around the list itself.
        self._slots = anyio.Semaphore(size)
        self._idle: list[tuple[int, StreamSession | None]] = [(i, None) for i in range(size)]
        self.sessions: dict[int, StreamSession] = {}

    # -- warm-up -----------------------------------------------------------------------------
    async def warm(self, timeout_s: float) -> None:
        """Start every slot and wait for its handshake answer; one clear line if one never comes."""
        slots = [slot for slot, _ in self._idle]
        errors: list[str] = []

        async def one(slot: int) -> None:
            try:
                await anyio.to_thread.run_sync(self._handshake, slot, timeout_s, abandon_on_cancel=True)
            except ExecutorError as exc:
                errors.append(str(exc))

        async with anyio.create_task_group() as tg:
            for slot in slots:
                tg.start_soon(one, slot)
        if errors:
            # A slot that never answered is the telling one; others may only have seen it killed.
            # Either way the image does not speak stream: its fault, not the engine's.
            timeouts = [e for e in errors if "no answer to the stream handshake" in e]
            raise ImageContractError((timeouts or errors)[0])
        self._idle = [(slot, self.sessions[slot]) for slot in slots]

    def _handshake(self, slot: int, timeout_s: float) -> None:
        try:
            session = self._start(slot)
        except Exception as exc:
            raise ExecutorError(f"{self.seam.seam}: cannot start the stream process: {describe(exc)}") from exc
        request_id = session.next_id
        session.next_id += 1
        try:
            raw = session.request(encode_request(request_id, {}, HANDSHAKE_INPUT), timeout_s)
        except TimeoutError:
            self._kill(slot, session)
            raise ExecutorError(stream_handshake_error(self.seam.seam, timeout_s)) from None
        try:
            if raw is None and session.overflow is not None:
                raise StreamProtocolError(f"the answer was over the output cap ({session.overflow})")
            if raw is None:
                raise StreamProtocolError(f"the stream process exited ({session.stderr_text() or 'no stderr'})")
            decode_response(raw, request_id)
        except StreamProtocolError as exc:
            self._kill(slot, session)
            raise ExecutorError(f"{self.seam.seam}: no valid answer to the stream handshake: {exc}; "
                                "if this image speaks exec only, use mode=exec") from None

    # -- calls -------------------------------------------------------------------------------
    async def call(self, call: HookCall, obj: Any) -> HookOutcome:
        # One request at a time per stream process, so the timeout measures only this
        # request, never queueing behind another.
        async with self._slots:
            slot, session = self._idle.pop()
            try:
                outcome, session = await anyio.to_thread.run_sync(
                    self._call, call, obj, slot, session, abandon_on_cancel=True)
            finally:
                self._idle.append((slot, session))
            return outcome

    def _start(self, slot: int, in_call: bool = False) -> StreamSession:
        seam = self.seam
        api = seam.executor.api
        pidfile = f"{STREAM_PIDFILE}.{slot}"
        cmd = ["/bin/sh", "-c", STREAM_WRAPPER, pidfile, *stream_command(seam.hook_cmd)]
        exec_id = seam.create_exec(cmd, seam.base_env, in_call=in_call)
        handle = HijackedExec.start(api.host, api.api_version, exec_id)
        session = StreamSession(handle, pidfile)
        self.sessions[slot] = session
        return session

    def _kill(self, slot: int, session: StreamSession) -> None:
        self.sessions.pop(slot, None)
        # Closed first: a daemon blocked on output we no longer read delays the kill.
        session.close()
        self.seam.kill_by_pidfile(session.pidfile)

    def _call(self, call: HookCall, obj: Any, slot: int, session: StreamSession | None
              ) -> tuple[HookOutcome, StreamSession | None]:
        """Mirrors the local executor's stream semantics so both grade identically."""
        seam = self.seam
        start = time.perf_counter()
        try:
            if session is None or not session.alive or self.sessions.get(slot) is not session:
                session = self._start(slot, in_call=True)
        except Exception as exc:
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - start) * 1000,
                               infra_error=describe(exc)), None
        request_id = session.next_id
        session.next_id += 1
        line = encode_request(request_id, seam.container_env(call.env), obj, call.cwd)
        start = time.perf_counter()
        try:
            raw = session.request(line, call.timeout_s)
        except TimeoutError:
            self._kill(slot, session)
            return HookOutcome(None, b"", b"", True, (time.perf_counter() - start) * 1000), None
        elapsed_ms = (time.perf_counter() - start) * 1000
        if raw is None and session.overflow is not None:
            self._kill(slot, session)
            return oversize_outcome(session.overflow, elapsed_ms), None
        if raw is None:
            self._kill(slot, session)
            log.debug("docker: %s stream process died: %s", seam.seam, session.stderr_text())
            return HookOutcome(1, b"", b"stream process died", False, elapsed_ms), None
        try:
            code, stdout, stderr = decode_response(raw, request_id)
        except StreamProtocolError as exc:
            self._kill(slot, session)
            return HookOutcome(1, b"", str(exc).encode(), False, elapsed_ms), None
        out, err = decode_stream_text(stdout), decode_stream_text(stderr)
        for name, data in (("stdout", out), ("stderr", err)):
            if len(data) > MAX_OUTPUT_BYTES:
                self._kill(slot, session)
                return oversize_outcome(OutputLimitExceeded(name, MAX_OUTPUT_BYTES), elapsed_ms), None
        return HookOutcome(code, out, err, False, elapsed_ms), session

    def close(self) -> None:
        for session in self.sessions.values():
            with contextlib.suppress(Exception):
                session.close()
        self.sessions.clear()
