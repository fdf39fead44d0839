"""A run's traces spilled to disk (orchestrator/spill.py) come back as the same models and the same
trace-file bytes as when they were held in memory."""

from __future__ import annotations

from pathlib import Path

from brainbench.models.result import Receipt, RunResult
from brainbench.models.trace import TurnTrace
from brainbench.orchestrator.spill import TraceSpill, TraceStream
from brainbench.report.trace_file import load_result, trace_path_for, write_trace


def _trace(fixture: str, turn: int, context: str | None) -> TurnTrace:
    return TurnTrace.model_validate({
        "fixture_id": fixture, "turn_id": turn, "harness": "openclaw", "suites": ["know-to-ask"],
        "prompt": f"turn {turn}: line\u2028separator, next\u0085line, form\ffeed", "prior_messages": turn - 1,
        "prior_injections": 0, "context": context, "context_chars": len(context or ""),
        "injected_slugs": ["people/a"] if context else [], "injected_tokens": 7 if context else 0,
        "exit_code": 0, "latency_ms": 1.5, "gold": {"should_retrieve": True, "gold_slugs": ["people/a"]},
        "verdicts": [{"slug": "people/a", "verdict": "injected", "reason": "injected"}],
    })


UNITS = [
    [_trace("f1", 1, "## Pages\n- **A** → `people/a` ✓ é\u2029"), _trace("f1", 3, None)],
    [],  # a unit that replayed nothing (seed failure, write-back only)
    [_trace("f2", 1, "x" * 4000), _trace("f2", 3, "\r\n\t\"quoted\"")],
]


def _result(trace: object) -> RunResult:
    receipt = Receipt(fixtures_hash="h", harness_sha="s", ts="2026-12-01T00:00:00.000Z", cmd_args=[], seed=42,
                      include_holdout=False, llm=False)
    result = RunResult(receipt=receipt, cells=[], turn_rows=[], seed_failures=[])
    result.use_trace(trace)
    return result


def test_spilled_units_read_back_equal_in_order() -> None:
    spill = TraceSpill()
    handles = [spill.keep(unit) for unit in UNITS]
    assert [len(h) for h in handles] == [2, 0, 2]
    assert [list(h) for h in handles] == UNITS
    assert list(handles[2].json_lines()) == [t.model_dump_json() + "\n" for t in UNITS[2]]
    # Read back in another order than written: each handle knows its own place in the file.
    stream = TraceStream([handles[2], handles[0], handles[1]])
    assert len(stream) == 4
    assert list(stream) == [*UNITS[2], *UNITS[0]]


def test_the_trace_file_of_a_spilled_run_is_byte_identical(tmp_path: Path) -> None:
    spill = TraceSpill()
    spilled = _result(TraceStream([spill.keep(unit) for unit in UNITS]))
    held = _result([t for unit in UNITS for t in unit])
    write_trace(tmp_path / "a" / "result.json", spilled)
    write_trace(tmp_path / "b" / "result.json", held)
    data = trace_path_for(tmp_path / "a" / "result.json").read_bytes()
    assert data == trace_path_for(tmp_path / "b" / "result.json").read_bytes()
    assert spilled.meta.trace == held.meta.trace  # same sha256 and row count
    assert spilled.meta.trace is not None and spilled.meta.trace.rows == 4
    # And a reader gets the very models back (U+2028 and U+0085 stay inside their lines).
    (tmp_path / "a" / "result.json").write_text(spilled.model_dump_json(by_alias=True), encoding="utf-8")
    assert load_result(tmp_path / "a" / "result.json").trace == [t for unit in UNITS for t in unit]


def test_an_empty_spill_streams_nothing(tmp_path: Path) -> None:
    result = _result(TraceStream([TraceSpill().keep([])]))
    assert not result.trace
    write_trace(tmp_path / "result.json", result)
    assert trace_path_for(tmp_path / "result.json").read_bytes() == b""
