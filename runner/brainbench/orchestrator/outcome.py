"""What one work unit (a fixture or a continuity pair) contributed, kept for the result.

The result document itself is built downstream (``metrics.result.build_result``), by the
same code for a run and for a merge of shard results.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from brainbench.models.result import Fault, RunResult, SeedFailure, TurnRow
from brainbench.models.shard import KeyOutcome
from brainbench.models.trace import TurnTrace
from brainbench.models.trust_run import TrustFixtureScore
from brainbench.models.writeback import ContinuityScore, WriteBackScore


@dataclass
class FixtureOutcome:
    """Everything one fixture (or pair) contributed; assembled later in corpus order."""

    rows: list[TurnRow] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    write_back: WriteBackScore | None = None
    # Seed contract v2: harness → the write-back of that seam's image into its own store.
    image_write_back: dict[str, WriteBackScore] = field(default_factory=dict)
    continuity: dict[str, ContinuityScore] = field(default_factory=dict)  # harness → score
    seed_failure: SeedFailure | None = None
    calls: int = 0  # hook calls made for it (this run's, for progress; not in the result)
    # A memory-trust fixture's scores (its suite's cells are assembled from these).
    trust: TrustFixtureScore | None = None
    # Evidence per turn (beside the result, never in it): see diagnosis/reference.py. Once the
    # unit is done, a handle on its lines in the run's spill file (orchestrator/spill.py).
    traces: Sequence[TurnTrace] = field(default_factory=list)

    def scores(self) -> dict[str, Any]:
        """The per-unit scores that cells aggregate away (for --resume)."""
        return {
            "write_back": self.write_back.model_dump(mode="json") if self.write_back is not None else None,
            "continuity": {h: c.model_dump(mode="json") for h, c in self.continuity.items()},
            "image_write_back": {h: c.model_dump(mode="json") for h, c in self.image_write_back.items()},
            "seed_failure": self.seed_failure.model_dump(mode="json") if self.seed_failure else None,
            "trust": self.trust.model_dump(mode="json") if self.trust is not None else None,
        }

    @classmethod
    def from_record(cls, record: KeyOutcome, rows: Sequence[TurnRow], faults: Sequence[Fault],
                    traces: Sequence[TurnTrace]) -> FixtureOutcome:
        return cls(
            rows=[rows[i] for i in record.rows],
            faults=[faults[i] for i in record.faults],
            traces=[traces[i] for i in record.traces if i < len(traces)],
            write_back=WriteBackScore.model_validate(record.write_back) if record.write_back else None,
            continuity={h: ContinuityScore.model_validate(c) for h, c in record.continuity.items()},
            image_write_back={h: WriteBackScore.model_validate(c) for h, c in record.image_write_back.items()},
            seed_failure=SeedFailure.model_validate(record.seed_failure) if record.seed_failure else None,
            trust=TrustFixtureScore.model_validate(record.trust) if record.trust else None,
        )


def key_records(keyed: Sequence[tuple[str, FixtureOutcome]]) -> dict[str, KeyOutcome]:
    """Per-unit records whose indexes point into the rows and faults that ``build_result`` lays out."""
    records: dict[str, KeyOutcome] = {}
    row_at = fault_at = trace_at = 0
    for key, o in keyed:
        scores = o.scores()
        records[key] = KeyOutcome(rows=list(range(row_at, row_at + len(o.rows))),
                                  faults=list(range(fault_at, fault_at + len(o.faults))),
                                  traces=list(range(trace_at, trace_at + len(o.traces))),
                                  write_back=scores["write_back"], continuity=scores["continuity"],
                                  image_write_back=scores["image_write_back"],
                                  seed_failure=scores["seed_failure"], trust=scores["trust"])
        row_at += len(o.rows)
        fault_at += len(o.faults)
        trace_at += len(o.traces)
    return records


def resumed_outcomes(previous: RunResult, readers: Mapping[str, str]) -> dict[str, FixtureOutcome]:
    """The finished units of an interrupted run (``_meta.run.resume_state``), to be adopted as they were.

    A state written by :func:`key_records` points at its own rows, faults and traces; an older one
    holds only the scores, and its rows are found by fixture id (``readers`` maps a pair to its reader).
    """
    run = previous.meta.run
    state = (run.resume_state or {}) if run else {}
    adopted: dict[str, FixtureOutcome] = {}
    for key in run.completed_fixtures if run else []:
        if key not in state:
            continue
        record = KeyOutcome.model_validate(state[key])
        if "rows" in state[key]:
            adopted[key] = FixtureOutcome.from_record(record, previous.turn_rows, previous.meta.faults, previous.trace)
            continue
        fid = readers.get(key, key)
        legacy = FixtureOutcome.from_record(record, [], [], [])
        legacy.rows = [r for r in previous.turn_rows if r.fixture_id == fid]
        legacy.faults = [f for f in previous.meta.faults if f.fixture_id == fid]
        legacy.traces = [t for t in previous.trace if t.fixture_id == fid]
        adopted[key] = legacy
    return adopted


def utc_iso(ts: Any, *, millis: bool = False) -> str:
    text = ts.isoformat(timespec="milliseconds") if millis else ts.isoformat()
    return text.replace("+00:00", "Z")
