"""Output limits shared by every provider and mode, so parity is code rather than a comment.

A hook's stdout and stderr are each captured up to :data:`MAX_OUTPUT_BYTES`.  One byte
more and the call is over: the provider kills the hook (its process group, or the stream
worker) at once and returns :func:`oversize_outcome`, which the grader turns into an
``oversize`` fault.  Nothing is buffered past the cap, and line framing scans each byte
once, so a hostile hook costs the runner bounded memory and linear time.
"""

from __future__ import annotations

from brainbench.executors.base import HookOutcome

# Enough to see that a hook broke the 10,000-character context cap by a wide margin,
# without letting a runaway hook fill the runner's memory.
MAX_OUTPUT_BYTES = 1024 * 1024
# A stream response carries stdout and stderr JSON-escaped in one line: at most six
# bytes per byte of output (\uXXXX), plus the envelope.  Any honest answer fits.
MAX_STREAM_LINE_BYTES = 2 * 6 * MAX_OUTPUT_BYTES + 4096


class OutputLimitExceeded(Exception):
    """A hook wrote more than the cap on one channel (``stream`` names it)."""

    def __init__(self, stream: str, limit: int) -> None:
        super().__init__(f"{stream} over {limit} bytes")
        self.stream = stream
        self.limit = limit


class CappedBuffer:
    """Collects one channel's bytes; :meth:`add` raises once the cap is crossed."""

    def __init__(self, stream: str, limit: int = MAX_OUTPUT_BYTES) -> None:
        self.stream = stream
        self.limit = limit
        self.data = bytearray()

    def add(self, chunk: bytes) -> None:
        if len(self.data) + len(chunk) > self.limit:
            raise OutputLimitExceeded(self.stream, self.limit)
        self.data += chunk

    def __bytes__(self) -> bytes:
        return bytes(self.data)


class LineSplitter:
    """Incremental newline framing with a cap on the pending line.

    Only bytes not scanned before are searched for the delimiter, so a megabyte line
    arriving one byte at a time costs linear, not quadratic, time.
    """

    def __init__(self, limit: int = MAX_STREAM_LINE_BYTES, stream: str = "stdout") -> None:
        self.limit = limit
        self.stream = stream
        self._buf = bytearray()
        self._scanned = 0

    def feed(self, chunk: bytes) -> list[bytes]:
        self._buf += chunk
        lines: list[bytes] = []
        start = 0
        while (nl := self._buf.find(b"\n", max(start, self._scanned))) >= 0:
            lines.append(bytes(self._buf[start:nl]))
            start = nl + 1
        if start:
            del self._buf[:start]
        self._scanned = len(self._buf)
        if len(self._buf) > self.limit:
            raise OutputLimitExceeded(self.stream, self.limit)
        return lines


def stream_handshake_error(seam: str, timeout_s: float) -> str:
    """The one line a stream seam that never answers its warm-up gets (issue: exec-only images)."""
    return (f"{seam}: no answer to the stream handshake in {timeout_s:g} s: this image speaks exec only; "
            "use mode=exec")


def oversize_outcome(exc: OutputLimitExceeded, duration_ms: float) -> HookOutcome:
    """The graded result of a hook killed for output over the cap (its output is discarded)."""
    return HookOutcome(None, b"", b"", False, duration_ms, oversize=str(exc))


def decode_stream_text(value: object) -> bytes:
    """A stream response's stdout/stderr back to bytes.

    JSON can carry lone surrogates that no UTF-8 encoder accepts.  A stream program that
    decoded its output with ``surrogateescape`` (Python's own convention for undecodable
    bytes) gets its exact bytes back; any other lone surrogate stays the invalid UTF-8 it
    stands for.  Either way the grader sees non-UTF-8 output, as from an exec call.
    """
    text = str(value)
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
