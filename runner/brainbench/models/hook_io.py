"""One hook invocation and what came back, as bytes: the shape between executors and grading.

Frozen dataclasses rather than pydantic models on purpose: they are built once
per hook call on the runner's hot path and never persisted (the result JSON
carries graded turn rows, not raw outcomes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class HookCall:
    """One hook invocation: the exact stdin bytes plus per-invocation environment."""

    payload: bytes
    env: Mapping[str, str]
    timeout_s: float
    # The working directory the harness starts the hook in (the payload's ``cwd``); None:
    # the seam's own.  Every provider and mode honours it (tests/executors).
    cwd: str | None = None


@dataclass(frozen=True)
class HookOutcome:
    """What came back from one invocation, before any interpretation."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    duration_ms: float
    # Set when the executor itself failed (spawn error, container gone): an
    # infrastructure fault, never a memory miss.
    infra_error: str | None = None
    # Set when the hook wrote more than the output cap (executors.limits) and was killed
    # for it; the output is discarded and the call graded ``oversize``.
    oversize: str | None = None
