"""Shards: one slice of a run's work, and what a shard result must carry to be merged exactly."""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardSpec(BaseModel):
    """``--shard I/N``: the I-th of N slices, 1-based like Playwright's ``--shard``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=1)
    total: int = Field(ge=1)

    @model_validator(mode="after")
    def _index_in_range(self) -> ShardSpec:
        if self.index > self.total:
            raise ValueError(f"shard {self.index}/{self.total}: the index must be between 1 and {self.total}")
        return self

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        match = _SPEC.match(text)
        if match is None:
            raise ValueError(f"--shard {text!r}: expected I/N, e.g. 1/4")
        return cls(index=int(match.group(1)), total=int(match.group(2)))

    def __str__(self) -> str:
        return f"{self.index}/{self.total}"


class KeyOutcome(BaseModel):
    """What one work unit (a fixture, or a continuity pair ``pair:ID``) contributed to a result.

    Rows and faults are indexes into the result's own ``turn_rows`` and ``_meta.faults``:
    a fixture can be replayed both on its own and as a pair's reader, so filtering rows
    by fixture id cannot tell whose they are.  The scores are what cells aggregate away.
    """

    model_config = ConfigDict(extra="forbid")

    rows: list[int] = Field(default_factory=list)
    faults: list[int] = Field(default_factory=list)
    # Indexes into the shard's trace file (``_meta.trace``), laid out like the rows.
    traces: list[int] = Field(default_factory=list)
    write_back: dict[str, Any] | None = None
    # Seed contract v2: per image-seeded harness, its own write-back score.
    image_write_back: dict[str, dict[str, Any]] = Field(default_factory=dict)
    continuity: dict[str, dict[str, Any]] = Field(default_factory=dict)
    seed_failure: dict[str, Any] | None = None
    trust: dict[str, Any] | None = None


class ShardInfo(BaseModel):
    """Written under ``_meta.shard`` of a shard result; ``brainbench merge`` needs all of it."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(ge=1)
    total: int = Field(ge=1)
    # Every unit of the whole selection in run order, so a merge can prove nothing is missing.
    plan: list[str]
    keys: list[str]
    # Everything that must be equal across shards for their union to be one run.
    fingerprint: dict[str, Any]
    outcomes: dict[str, KeyOutcome] = Field(default_factory=dict)
