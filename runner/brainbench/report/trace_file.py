"""The trace file beside a result: ``result.json`` → ``result.trace.jsonl``, one TurnTrace per line.

The result references it from ``_meta.trace`` with its sha256, so a reader can
tell a trace that belongs to the result from a stale one.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from pydantic import ValidationError

from brainbench.models.result import RunResult, TraceInfo
from brainbench.models.trace import CONTEXT_CAP, TurnTrace
from brainbench.report.files import atomic_write_lines


class TraceFileError(ValueError):
    """A result or its trace cannot be read; the message names the file (and line)."""


def trace_path_for(out: Path) -> Path:
    return out.with_name(f"{out.stem}.trace.jsonl")


def write_trace(out: Path, result: RunResult) -> Path:
    """Write the trace beside ``out`` and point ``result._meta.trace`` at it (call before writing ``out``)."""
    path = trace_path_for(out)
    # A run's spilled trace hands over its lines as written (orchestrator/spill.py), unparsed.
    spilled = getattr(result.trace, "json_lines", None)
    lines = spilled() if spilled is not None else (t.model_dump_json() + "\n" for t in result.trace)
    sha256 = atomic_write_lines(path, lines)
    previous = result.meta.trace
    result.meta.trace = TraceInfo(
        path=path.name, sha256=sha256, rows=len(result.trace),
        context_cap=CONTEXT_CAP, work_root=previous.work_root if previous else None,
    )
    return path


def load_result(path: Path) -> RunResult:
    """A result file with its trace loaded (an absent trace leaves ``result.trace`` empty)."""
    try:
        result = RunResult.model_validate_json(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(document)"
        raise TraceFileError(f"{path}: not a BrainBench result: {where}: {first['msg']}") from exc
    info = result.meta.trace
    if info is None or info.path is None:
        return result
    trace = path.parent / info.path
    try:
        data = trace.read_bytes()
    except OSError as exc:
        raise TraceFileError(f"{trace}: the result's trace cannot be read: {exc.strerror or exc}") from exc
    if info.sha256 and hashlib.sha256(data).hexdigest() != info.sha256:
        raise TraceFileError(f"{trace}: does not match the sha256 recorded in {path} (_meta.trace.sha256)")
    # Lines end at "\n" alone: str.splitlines would also cut at U+2028 or U+0085 inside a
    # prompt or an injected context, which JSON leaves unescaped.
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            result.trace.append(TurnTrace.model_validate_json(line))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise TraceFileError(f"{trace}:{number}: {where}: {first['msg']}") from exc
    return result
