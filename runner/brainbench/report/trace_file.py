"""The trace file of a result: ``result.json`` → ``result.trace.jsonl``, one TurnTrace per line.

Beside the result by default; elsewhere when asked (``--trace FILE``), and in the project's
``.brainbench/traces/`` for a ``--json`` run, whose caller owns the directory of ``--out``
(gbrain-evals renames its nonced result and would leave the trace behind).  The result
references it from ``_meta.trace`` — by name when it lies beside the result, else by absolute
path — with its sha256, so a reader can tell a trace that belongs to the result from a stale one.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import ValidationError

from brainbench.models.result import RunResult, TraceInfo
from brainbench.models.trace import CONTEXT_CAP, TurnTrace
from brainbench.report.files import atomic_write_lines


class TraceFileError(ValueError):
    """A result or its trace cannot be read; the message names the file (and line)."""


def trace_path_for(out: Path) -> Path:
    return out.with_name(f"{out.stem}.trace.jsonl")


# Traces kept in a project's .brainbench/traces/ (the newest by modification time): runs there do not pile up.
KEEP_TRACES = 10


def prune_traces(directory: Path, keep: int = KEEP_TRACES) -> None:
    """Remove all but the ``keep`` newest ``*.trace.jsonl`` of ``directory``."""
    traces = sorted(directory.glob("*.trace.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in traces[keep:]:
        old.unlink(missing_ok=True)


def write_trace(out: Path, result: RunResult, path: Path | None = None) -> Path:
    """Write the trace (at ``path``, default beside ``out``) and point ``result._meta.trace`` at it
    (call before writing ``out``)."""
    path = path or trace_path_for(out)
    # A run's spilled trace hands over its lines as written (orchestrator/spill.py), unparsed.
    spilled = getattr(result.trace, "json_lines", None)
    lines = spilled() if spilled is not None else (t.model_dump_json() + "\n" for t in result.trace)
    sha256 = atomic_write_lines(path, lines)
    previous = result.meta.trace
    beside = path.parent.resolve() == out.parent.resolve()
    result.meta.trace = TraceInfo(
        path=path.name if beside else os.path.abspath(path), sha256=sha256, rows=len(result.trace),
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
