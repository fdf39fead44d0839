"""The committed gate baseline (``baselines/main.json``, schema_version 1).

Mirrors gbrain's published ``baseline.schema.json``: run config, per-cell metrics
(4-decimal rounded) and per-cell gold counts.  Receipts (sha, timestamps, argv),
seams, fixture lists and turn rows are deliberately absent -- every byte of the
file is a reviewable delta.  Unknown keys are rejected.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from brainbench.models.behaviour import NEWEST, Behaviour


def _integral_number(value: object) -> object:
    # JSON has one number type; gbrain's schema says "integer", which JSON Schema
    # (and JS) satisfy with 3.0 as well as 3.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


Count = Annotated[int, BeforeValidator(_integral_number), Field(ge=0)]


class _Strict(BaseModel):
    # strict: a baseline is machine-written; "1" or true where a number belongs is
    # corruption, not something to coerce.
    model_config = ConfigDict(extra="forbid", strict=True)


class BaselineConfig(_Strict):
    """The run configuration the numbers were produced under.

    ``fixtures_hash`` covers files only; comparisons additionally require an equal
    config.  Lists are sorted but not de-duplicated (gbrain compares them as JSON).
    """

    include_holdout: bool
    llm: bool
    harnesses: list[str]
    suites: list[str]
    # Ours, not gbrain's: written only when it is not the newest release, so a baseline of
    # gbrain 0.60's behaviour keeps gbrain's exact shape (gbrain's own files carry no such key).
    behaviour: Behaviour | None = Field(
        default=None, description=f"gbrain release the reference seams behaved like (absent: {NEWEST}).")

    @property
    def effective_behaviour(self) -> Behaviour:
        return self.behaviour or NEWEST


class CellCounts(_Strict):
    gold_total: Count
    gold_failed: Count


class Baseline(_Strict):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        title="BrainBench committed baseline (schema_version 1)",
    )

    schema_version: Literal[1] = 1
    fixtures_hash: str
    config: BaselineConfig
    justification: str | None = Field(
        default=None,
        description="Required by the gate (not the schema) when an update regresses a metric.",
    )
    cells: dict[str, dict[str, float | int]] = Field(
        description="`harness/suite` -> metric -> value (4-decimal rounded)."
    )
    counts: dict[str, CellCounts] = Field(description="`harness/suite` -> count-aware gate inputs.")
