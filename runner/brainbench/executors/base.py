"""The executor interface: start a seam, call one hook with one JSON message, stop.

Executors move bytes; they know nothing about memory, gold or metrics.  How the
bytes are interpreted (silence, context, block, contract violation) lives in
``brainbench.harnesses.grading`` so every provider is graded by one set of rules.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from brainbench.models.hook_io import HookCall, HookOutcome

# Re-exported: providers and their tests import the call shapes from here.
__all__ = ["Executor", "ExecutorError", "HookCall", "HookOutcome", "InvocationMode", "SeamLaunch", "SeamProcess"]

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
