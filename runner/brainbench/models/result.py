"""The result document of a run (result_schema_version 1).

The gbrain-compatible core (receipt, cells, turn_rows, seed_failures) keeps
gbrain's exact keys so foreign runners parse it unchanged; everything BrainBench
adds (faults, executor, image digests, interruption) lives under ``_meta``, the
one object gbrain's published schema leaves open.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_serializer, model_validator

from brainbench.models.behaviour import Behaviour
from brainbench.models.budget import Concurrency
from brainbench.models.corpus import Suite, TurnGold
from brainbench.models.phases import RunPhases
from brainbench.models.shard import ShardInfo
from brainbench.models.trust_run import TrustFixtureScore

Harness = Literal["openclaw", "claude-code", "codex"]
HARNESSES: tuple[Harness, ...] = ("openclaw", "claude-code", "codex")
SeamKind = Literal["production", "contract"]
FaultClass = Literal[
    "adapter_timeout",
    "adapter_crash",
    "contract_violation",
    "blocked",
    "oversize",
    "infra_error",
]
Verdict = Literal["pass", "regression", "inconclusive"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Receipt(_Model):
    result_schema_version: Literal[1] = 1
    fixtures_hash: str
    harness_sha: str
    ts: str = Field(json_schema_extra={"format": "date-time"})
    cmd_args: list[str]
    seed: int
    include_holdout: bool
    llm: bool


class Cell(_Model):
    suite: Suite
    harness: Harness
    seam: SeamKind
    gold_total: int = Field(ge=0)
    gold_failed: int = Field(ge=0)
    metrics: dict[str, float | int]
    fixtures: list[str]


class TurnRow(_Model):
    fixture_id: str
    turn_id: int
    harness: Harness
    suite: Suite
    injected_slugs: list[str]
    injected_tokens: int | float
    gold: TurnGold | None
    cross_source_slugs: list[str]
    latency_ms: float

    @field_serializer("gold")
    def _gold_as_authored(self, gold: TurnGold | None) -> dict[str, Any] | None:
        # gbrain echoes the gold object as authored: absent keys stay absent.
        return None if gold is None else gold.model_dump(mode="json", exclude_none=True)


class SeedFailure(_Model):
    fixture_id: str
    error: str


class Fault(_Model):
    """A seam misbehaved on one turn; the turn was scored as silence."""

    fixture_id: str
    turn_id: int
    harness: Harness
    fault_class: FaultClass
    detail: str


class SeamInfo(_Model):
    harness: Harness
    seam: SeamKind
    executor: str
    mode: Literal["exec", "stream"]
    image: str | None = None
    image_digest: str | None = None
    # The CPU quota of the seam's container (--cpus, or the cores shared among the run's seams);
    # None: no quota (a local process, or --cpus 0).  An image's own deadlines depend on it.
    cpus: float | None = None
    # Seed contract version when the image seeds its own brain (label io.brainbench.brain).
    brain_contract: int | None = None
    # An image-seeded seam: suite → why the image has no path to it (not applicable); the suites it
    # declares a path for (seed contract v2) are absent.  None for a seam that seeds no brain.
    brain_not_applicable: dict[str, str] | None = None


class NotApplicable(_Model):
    """A (harness, suite) the run did not score, and why: never silently scored, never a failure."""

    harness: Harness
    suite: Suite
    reason: str
    fixtures: list[str] = Field(default_factory=list)


class RunInfo(_Model):
    run_id: str
    executor: str
    jobs: int
    harnesses: list[str] = Field(default_factory=list)
    suites: list[str] = Field(default_factory=list)
    started_at: str
    finished_at: str | None = None
    complete: bool = True
    interrupted_by: str | None = None
    completed_fixtures: list[str] = Field(default_factory=list)
    # The --fixture selection (ids or globs) when the run was not the whole corpus.
    fixture_selection: list[str] | None = None
    # Only in an incomplete result: per-fixture scores that cells aggregate away,
    # so ``--resume`` can rebuild the finished part exactly.
    resume_state: dict[str, dict[str, Any]] | None = None
    seams: list[SeamInfo] = Field(default_factory=list)
    fault_counts: dict[str, int] = Field(default_factory=dict)
    extraction: dict[str, float | int] | None = None
    # How ``jobs`` was chosen and the connections budgeted for it (brain/budget.py).
    concurrency: Concurrency | None = None
    # The gbrain release our reference seams behaved like (--behaviour); None: written before it existed.
    behaviour: Behaviour | None = None


class TraceInfo(_Model):
    """``_meta.trace``: where the per-turn evidence (``models.trace.TurnTrace`` rows) of this result lives."""

    path: str | None = Field(default=None, description="Trace JSON lines: a name beside the result file, or an "
                                                       "absolute path.")
    sha256: str | None = None
    rows: int = Field(default=0, ge=0)
    context_cap: int = 0
    work_root: str | None = Field(default=None, description="Kept work root (run --keep): transcripts, payloads.")


class Breach(_Model):
    cell: str
    metric: str
    main: float | int | None
    current: float | int | None
    detail: str


class CompareOutcome(_Model):
    verdict: Verdict
    # fresh-corpus: a run on a corpus generated at grading time against a baseline of another corpus
    # (gate/compare.py); only seed-independent invariants are gated.
    mode: Literal["same-hash", "corpus-bless", "fresh-corpus"]
    breaches: list[Breach] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


# A fresh corpus's seed stays below 2**53: gbrain-evals reads results in JavaScript, whose numbers
# keep integers exact only up to there.
MAX_FRESH_SEED = (1 << 53) - 1


class FreshCorpus(_Model):
    """``_meta.fresh_corpus``: the run graded a corpus generated at grading time (``run --fresh-corpus``).

    ``commitment`` is SHA-256 over the generator, the trust mode, the seed and a random salt
    (``brainbench.generator.fresh``).  ``seed`` and ``salt`` are absent when withheld
    (``--withhold-seed``: they went to a seed file to publish later, and ``receipt.seed`` is -1);
    ``brainbench corpus verify-seed`` checks a revealed seed against the commitment and the
    receipt's fixtures_hash.
    """

    generator: str
    trust: str
    commitment: str
    seed: int | None = Field(default=None, ge=0, le=MAX_FRESH_SEED)
    salt: str | None = None
    fixtures: int = Field(ge=0)


class Meta(_Model):
    metric_glossary: dict[str, str] = Field(default_factory=dict)
    run: RunInfo | None = None
    faults: list[Fault] = Field(default_factory=list)
    # Cells an image-seeded seam is not graded on (seed contract v1: no write-back command).
    not_applicable: list[NotApplicable] = Field(default_factory=list)
    # Only in the result of ``run --shard I/N``: what ``brainbench merge`` needs.
    shard: ShardInfo | None = None
    trace: TraceInfo | None = None
    # Memory-trust fixtures: each step's record and each gold item's verdict with its reasons
    # (what ``explain`` and the HTML report show).
    trust: list[TrustFixtureScore] = Field(default_factory=list)
    # The gate's verdict (``--compare``).  Under ``_meta`` because gbrain's result schema
    # forbids unknown top-level keys and gbrain-evals validates every result against it.
    compare: CompareOutcome | None = None
    fresh_corpus: FreshCorpus | None = None
    # Where the run's wall time went, per seam (models/phases.py): measurements, never graded.
    phases: RunPhases | None = None


class RunResult(_Model):
    model_config = ConfigDict(
        extra="forbid",
        populate_by_name=True,
        title="BrainBench run result (result_schema_version 1)",
    )

    receipt: Receipt
    cells: list[Cell]
    turn_rows: list[TurnRow]
    seed_failures: list[SeedFailure]
    meta: Meta = Field(default_factory=Meta, alias="_meta")
    # The per-turn evidence (TurnTrace rows) gathered by a run or loaded from its trace file;
    # never serialised into the result itself.
    _trace: list[Any] = PrivateAttr(default_factory=list)
    # Databases and roles the run could not drop (one line each): said on stderr, exit 2; never
    # serialised (the next run's sweep or `brainbench cleanup` takes them).
    _leftovers: list[str] = PrivateAttr(default_factory=list)

    @property
    def trace(self) -> list[Any]:
        return self._trace

    @property
    def leftovers(self) -> list[str]:
        return self._leftovers

    def left_behind(self, leftovers: list[str]) -> None:
        self._leftovers = list(leftovers)

    def use_trace(self, trace: Any) -> None:
        """Stand a sequence in for the trace (a run's evidence, read back from its spill file)."""
        self._trace = trace

    @model_validator(mode="before")
    @classmethod
    def _compare_moved_under_meta(cls, data: Any) -> Any:
        # Results written before 0.2 carried ``compare`` at the top level; still read them.
        if isinstance(data, dict) and "compare" in data:
            data = dict(data)
            meta = dict(data.get("_meta") or data.get("meta") or {})
            meta.setdefault("compare", data.pop("compare"))
            data["_meta" if "meta" not in data else "meta"] = meta
        return data

    def to_json_dict(self) -> dict[str, Any]:
        doc = self.model_dump(mode="json", by_alias=True)
        for key in ("run", "shard", "trace", "compare", "fresh_corpus", "phases"):
            if doc["_meta"].get(key) is None:
                doc["_meta"].pop(key, None)
        for key in ("not_applicable", "trust"):
            if not doc["_meta"].get(key):
                doc["_meta"].pop(key, None)
        return doc
