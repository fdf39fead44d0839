"""The executor interface: start a seam, call one hook with one JSON message, stop.

Executors move bytes; they know nothing about memory, gold or metrics.  How the
bytes are interpreted (silence, context, block, contract violation) lives in
``brainbench.seams.outcome`` so every provider is graded by one set of rules.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

InvocationMode = Literal["exec", "stream"]


@dataclass(frozen=True)
class SeamLaunch:
    """Everything an executor needs to bring one seam up for a run."""

    seam: str
    command: tuple[str, ...]
    mode: InvocationMode = "stream"
    image: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    # Host paths the hook must see at the same absolute path (transcripts, cwd).
    shared_paths: tuple[str, ...] = ()
    run_id: str = ""


@dataclass(frozen=True)
class HookCall:
    """One hook invocation: the exact stdin bytes plus per-invocation environment."""

    payload: bytes
    env: Mapping[str, str]
    timeout_s: float


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


class ExecutorError(RuntimeError):
    """The provider failed outside any hook call (no engine, no image, a container would not start).

    Failures *of* a hook are graded outcomes; this is the run being unable to go on.
    """


class SeamProcess(abc.ABC):
    """A started seam that can answer hook calls until stopped."""

    @abc.abstractmethod
    async def call(self, call: HookCall) -> HookOutcome: ...

    @abc.abstractmethod
    async def stop(self) -> None: ...


class Executor(abc.ABC):
    """A provider of seam processes (local subprocess, docker, ...)."""

    name: ClassVar[str]

    @abc.abstractmethod
    async def start(self, launch: SeamLaunch) -> SeamProcess: ...

    async def close(self) -> None:  # noqa: B027 - optional hook for providers
        """Release run-scoped resources (networks, pools)."""
