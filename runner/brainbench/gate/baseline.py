"""Canonical baseline: build it from a run, serialize it byte-stably, parse it back.

Spec §10.1 (gbrain ``scoreboard.ts``: ``toCanonicalBaseline``, ``serializeBaseline``,
``parseBaseline``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from brainbench.jsjson import js_json_dumps, js_sort_key, js_sorted, round4
from brainbench.models.baseline import Baseline, BaselineConfig, CellCounts
from brainbench.models.behaviour import NEWEST

if TYPE_CHECKING:
    from brainbench.models.result import RunResult

__all__ = [
    "BaselineError",
    "baseline_document",
    "canonical_baseline",
    "cell_key",
    "parse_baseline",
    "parse_baseline_text",
    "read_gate_file",
    "serialize_baseline",
    "write_baseline",
]

_REQUIRED = ("fixtures_hash", "config", "cells", "counts")


class BaselineError(ValueError):
    """A baseline file that cannot be used; the message always names the file."""


def cell_key(harness: str, suite: str) -> str:
    return f"{harness}/{suite}"


def canonical_baseline(
    result: RunResult,
    *,
    harnesses: list[str],
    suites: list[str],
    justification: str | None = None,
) -> Baseline:
    """The diff-stable baseline of a run.

    ``harnesses``/``suites`` are the *requested* lists (after ``all`` expansion),
    not the cells that came out: a run whose filters matched nothing for a harness
    must still record that it was asked for.  They are sorted but deliberately not
    de-duplicated, so ``--harness openclaw,openclaw`` is a config mismatch as in gbrain.
    """
    cells: dict[str, dict[str, float | int]] = {}
    counts: dict[str, CellCounts] = {}
    for cell in sorted(result.cells, key=lambda c: js_sort_key(cell_key(c.harness, c.suite))):
        key = cell_key(cell.harness, cell.suite)
        cells[key] = {name: round4(cell.metrics[name]) for name in js_sorted(list(cell.metrics))}
        counts[key] = CellCounts(gold_total=cell.gold_total, gold_failed=cell.gold_failed)
    run = result.meta.run
    behaviour = run.behaviour if run is not None else None
    return Baseline(
        fixtures_hash=result.receipt.fixtures_hash,
        config=BaselineConfig(
            include_holdout=result.receipt.include_holdout,
            llm=result.receipt.llm,
            harnesses=js_sorted(harnesses),
            suites=js_sorted(suites),
            behaviour=None if behaviour in (None, NEWEST) else behaviour,
        ),
        justification=justification,
        cells=cells,
        counts=counts,
    )


def baseline_document(b: Baseline, *, include_justification: bool = True) -> dict[str, Any]:
    """The baseline as a plain dict in gbrain's key order (spec §10.1).

    ``justification`` appears only when truthy (gbrain spreads it conditionally),
    between ``config`` and ``cells``; ``config.behaviour`` (ours) only when it is not the
    newest release, after ``suites``.  Cell and metric keys are re-sorted here so a
    hand-built or hand-edited model still serializes canonically.
    """
    doc: dict[str, Any] = {
        "schema_version": b.schema_version,
        "fixtures_hash": b.fixtures_hash,
        "config": {
            "include_holdout": b.config.include_holdout,
            "llm": b.config.llm,
            "harnesses": list(b.config.harnesses),
            "suites": list(b.config.suites),
        },
    }
    if b.config.effective_behaviour != NEWEST:
        doc["config"]["behaviour"] = b.config.effective_behaviour
    if include_justification and b.justification:
        doc["justification"] = b.justification
    doc["cells"] = {
        key: {name: b.cells[key][name] for name in js_sorted(list(b.cells[key]))}
        for key in js_sorted(list(b.cells))
    }
    doc["counts"] = {
        key: {"gold_total": b.counts[key].gold_total, "gold_failed": b.counts[key].gold_failed}
        for key in js_sorted(list(b.counts))
    }
    return doc


def serialize_baseline(b: Baseline, *, include_justification: bool = True) -> str:
    """``JSON.stringify(doc, null, 2) + '\\n'`` -- byte-identical to gbrain's output."""
    # js_key_order=False: the order above is the contract; a cell key is never an
    # integer-like string, and metric maps must not be reordered behind our back.
    return js_json_dumps(baseline_document(b, include_justification=include_justification),
                         2, js_key_order=False) + "\n"


def write_baseline(b: Baseline, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # newline="" keeps "\n" on every platform: the bytes are the contract.
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(serialize_baseline(b))


def _reject_constant(name: str) -> Any:
    # Python's json accepts NaN/Infinity; JSON.parse (and gbrain) does not.
    raise ValueError(f"{name} is not valid JSON")


def parse_baseline_text(text: str, source: str) -> Baseline:
    """Parse baseline JSON; errors name ``source`` (normally the file path)."""
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise BaselineError(f"baseline {source}: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise BaselineError(f"baseline {source}: expected a JSON object, got {type(data).__name__}")
    if data.get("schema_version") != 1 or isinstance(data.get("schema_version"), bool):
        raise BaselineError(
            f"baseline {source}: schema_version must be 1 (got {json.dumps(data.get('schema_version'))})"
        )
    missing = [name for name in _REQUIRED if name not in data]
    if missing:
        raise BaselineError(f"baseline {source}: missing required field(s): {', '.join(missing)}")
    try:
        return Baseline.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
        )
        raise BaselineError(f"baseline {source}: invalid baseline: {problems}") from None


def read_gate_file(path: Path, where: str) -> str:
    """The text of a file the gate reads; :class:`BaselineError` starting with ``where`` if it cannot."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BaselineError(f"{where}: file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BaselineError(f"{where}: cannot read ({exc})") from None


def parse_baseline(path: Path | str) -> Baseline:
    """Read and validate a baseline file, raising :class:`BaselineError` naming it."""
    p = Path(path)
    return parse_baseline_text(read_gate_file(p, f"baseline {p}"), str(p))
