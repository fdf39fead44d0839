"""The per-turn evidence of finished units, kept on disk until the trace file is written.

A trace row carries up to ``CONTEXT_CAP`` characters of injected text: held as models
for every unit of a large run, the evidence alone grew the runner's peak memory by
some 15 MB at 10× the corpus (docs/SCALING.md).  Each unit's traces are written, as
the very JSON lines of the trace file, to one anonymous temporary file the moment the
unit finishes; the run keeps an offset and a count per unit and reads them back, in
plan order, when the trace file is written (copied as text) or a report needs them.

The file is unlinked from the start (``tempfile.TemporaryFile``): nothing to sweep
after a crash, and it lives exactly as long as something still reads it.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from typing import IO

from brainbench.models.trace import TurnTrace


class TraceSpill:
    """One run's spill file; :meth:`keep` stores a unit's traces and returns their handle."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._end = 0

    def keep(self, traces: Iterable[TurnTrace]) -> SpilledTraces:
        blob = "".join(t.model_dump_json() + "\n" for t in traces).encode("utf-8")
        count = blob.count(b"\n")
        if self._file is None:
            self._file = tempfile.TemporaryFile(prefix="brainbench-trace-")
        offset = self._end
        written = 0
        while written < len(blob):
            written += os.pwrite(self._file.fileno(), blob[written:], offset + written)
        self._end += len(blob)
        return SpilledTraces(self, offset, len(blob), count)

    def read(self, offset: int, size: int) -> bytes:
        if self._file is None or size == 0:
            return b""
        chunks: list[bytes] = []
        while size:
            chunk = os.pread(self._file.fileno(), size, offset)
            if not chunk:
                raise OSError(f"trace spill file ended {size} bytes early")
            chunks.append(chunk)
            offset += len(chunk)
            size -= len(chunk)
        return b"".join(chunks)


class SpilledTraces(Sequence[TurnTrace]):
    """One unit's traces in the spill file: a sequence that reads them back when iterated."""

    def __init__(self, spill: TraceSpill, offset: int, size: int, count: int) -> None:
        self._spill, self._offset, self._size, self._count = spill, offset, size, count

    def __len__(self) -> int:
        return self._count

    def json_lines(self) -> Iterator[str]:
        """The trace file's lines for this unit, exactly as ``model_dump_json() + "\\n"`` wrote them."""
        # Split on newlines alone: str.splitlines would also cut at U+2028 and U+0085,
        # which JSON leaves unescaped inside strings.
        for line in self._spill.read(self._offset, self._size).split(b"\n")[:-1]:
            yield line.decode("utf-8") + "\n"

    def __iter__(self) -> Iterator[TurnTrace]:
        for line in self.json_lines():
            yield TurnTrace.model_validate_json(line)

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return list(self)[index]


class TraceStream(Sequence[TurnTrace]):
    """A run's whole trace, unit after unit in the order given, never held at once."""

    def __init__(self, parts: Sequence[Sequence[TurnTrace]]) -> None:
        self._parts = list(parts)

    def __len__(self) -> int:
        return sum(len(p) for p in self._parts)

    def __iter__(self) -> Iterator[TurnTrace]:
        for part in self._parts:
            yield from part

    def json_lines(self) -> Iterator[str]:
        for part in self._parts:
            if isinstance(part, SpilledTraces):
                yield from part.json_lines()
            else:
                yield from (t.model_dump_json() + "\n" for t in part)

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return list(self)[index]
