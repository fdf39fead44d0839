"""Result file (atomic), and the run ledger (one JSONL line per run)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from brainbench.jsjson import MadeOnDemand, js_json_chunks, stringify
from brainbench.models.result import RunResult

RESULT_MODE = 0o644


def atomic_write(path: Path, text: str) -> None:
    """Write via a temp file in the same directory and rename: readers never see half a file."""
    atomic_write_lines(path, [text])


def atomic_write_lines(path: Path, lines: Iterable[str]) -> str:
    """``atomic_write`` of the concatenated ``lines``, one at a time; returns the text's sha256.

    A large run's trace is tens of MB as one string (and again as bytes to hash): written
    line by line, the runner's peak memory does not grow with it.
    """
    digest = hashlib.sha256()

    def hashed() -> Iterator[str]:
        for line in lines:
            digest.update(line.encode())
            yield line

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.fchmod(fd, RESULT_MODE)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.writelines(hashed())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.filename is None:
            exc.filename = str(path)  # a failed write() names no file: say which one it was
        raise
    return digest.hexdigest()


def result_pretty(result: RunResult) -> str:
    return stringify(result.to_json_dict(), 2) + "\n"


def write_result(path: Path, result: RunResult) -> None:
    """``atomic_write(path, result_pretty(result))`` without the document as one string: a
    10× run's result is megabytes of text, and the runner's peak memory should not grow with it."""
    atomic_write_lines(path, _with_newline(js_json_chunks(_document(result), 2)))


def _document(result: RunResult) -> dict[str, Any]:
    """``result.to_json_dict()`` with the turn rows dumped one by one as they are written: all of
    them as dictionaries at once were some 4 MB of a 10× run's peak."""
    doc = result.model_copy(update={"turn_rows": []}).to_json_dict()
    doc["turn_rows"] = MadeOnDemand(result.turn_rows, lambda row: row.model_dump(mode="json", by_alias=True))
    return doc


def _with_newline(chunks: Iterable[str]) -> Iterator[str]:
    yield from chunks
    yield "\n"


def result_compact(result: RunResult) -> str:
    return stringify(result.to_json_dict()) + "\n"


def append_ledger(path: Path, result: RunResult, exit_code: int, extra: dict[str, object] | None = None) -> None:
    run = result.meta.run
    line = {
        "ts": result.receipt.ts,
        "run_id": run.run_id if run else None,
        "harness_sha": result.receipt.harness_sha,
        "fixtures_hash": result.receipt.fixtures_hash,
        "config": {"include_holdout": result.receipt.include_holdout, "llm": result.receipt.llm,
                   "behaviour": run.behaviour if run else None, "cmd_args": result.receipt.cmd_args},
        "complete": run.complete if run else True,
        "exit_code": exit_code,
        "seed_failures": len(result.seed_failures),
        "faults": len(result.meta.faults),
        "cells": {f"{c.harness}/{c.suite}": {**c.metrics, "gold_total": c.gold_total, "gold_failed": c.gold_failed}
                  for c in result.cells},
        **(extra or {}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, ensure_ascii=False) + "\n")


def fallback_ledger(default: Path) -> Path:
    """Where a read-only project's ledger line goes: one file per project under the temp directory
    (``TMPDIR``; in a pod, its scratch volume)."""
    key = hashlib.sha256(str(default.resolve()).encode("utf-8")).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / "brainbench-ledgers" / f"ledger-{key}.jsonl"


def append_ledger_or_say(path: Path, result: RunResult, exit_code: int, extra: dict[str, object] | None = None,
                         *, defaulted: bool = False) -> str | None:
    """Append the run's ledger line; a one-line note when it went elsewhere or nowhere.

    A ledger is a record, not a grade: a directory that cannot be written (a corpus baked into a
    read-only image) never ends a run that graded everything in an internal error.  The project's
    default ledger falls back to :func:`fallback_ledger`; an explicit ``--ledger`` is only reported.
    """
    try:
        append_ledger(path, result, exit_code, extra)
        return None
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        if not defaulted:
            return f"brainbench: could not append to the ledger {path}: {why}; the result itself is unaffected"
    other = fallback_ledger(path)
    try:
        append_ledger(other, result, exit_code, extra)
    except OSError as exc:
        return (f"brainbench: the project's ledger {path} is not writable ({why}), nor {other} "
                f"({exc.strerror or type(exc).__name__}); no ledger line written (--ledger PATH chooses one)")
    return f"brainbench: the project's ledger {path} is not writable ({why}); the line went to {other} " \
           "(--ledger PATH chooses one)"
