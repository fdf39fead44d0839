"""How a run is configured: every knob the CLI exposes, in one validated shape."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from brainbench.models.corpus import SUITES, Suite
from brainbench.models.result import Harness

DEFAULT_TIMEOUT_S = 30.0


class SeamOverride(BaseModel):
    """Replace what runs behind a seam: a production image or another command."""

    model_config = ConfigDict(extra="forbid")

    image: str | None = None
    command: list[str] | None = None
    mode: Literal["exec", "stream"] | None = None
    env: dict[str, str] = Field(default_factory=dict)
    timeout_s: float | None = Field(default=None, gt=0)
    kind: Literal["production", "contract"] | None = None


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fixtures_dir: Path
    gold_dir: Path
    harnesses: list[Harness] = Field(default_factory=lambda: ["openclaw", "claude-code", "codex"])
    suites: list[Suite] = Field(default_factory=lambda: list(SUITES))
    include_holdout: bool = False
    llm: bool = False
    budget_usd: float = Field(default=5.0, gt=0)
    seed: int = 42
    # None: chosen at run time from cores, memory and the brain server's connections.
    jobs: int | None = Field(default=None, ge=1)
    executor: Literal["local", "docker"] = "local"
    mode: Literal["exec", "stream"] = "stream"
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, gt=0)
    database_url: str | None = None
    seams: dict[str, SeamOverride] = Field(default_factory=dict)
    # --fixture: ids or globs; empty = the whole corpus.  A partial run is never gated.
    fixture_ids: list[str] = Field(default_factory=list)
    cmd_args: list[str] = Field(default_factory=list)
    keep: bool = False  # keep the run's work root (transcripts, payloads) for inspection
