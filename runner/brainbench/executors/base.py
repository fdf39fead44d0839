"""The executor interface: prepare a run, start warm seams, call hooks, close.

The lifecycle follows Inspect AI's sandbox environments:

* ``prepare(RunContext)`` once per run: run id, where the brain is (and, for a TCP brain
  in a container, how seams reach it), the work root, the seams' limits and hardening;
  the provider sweeps provably dead leftovers and builds run-scoped resources
  (a Docker network) here, never lazily inside a call.
* ``start(SeamLaunch)`` returns a seam that is already *warm and answering*, in every
  provider and mode: start-up never counts against a graded call's timeout.
* ``close(interrupted)`` releases everything the run created.
* ``cleanup(run_id)`` (class level) removes what a dead run left behind.

Signals belong to the orchestrator: a provider installs no handlers.  Executors move
bytes; they know nothing about memory, gold or metrics.  How the bytes are interpreted
(silence, context, block, contract violation) lives in ``brainbench.harnesses.grading`` so
every provider is graded by one set of rules.
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar, Literal

from brainbench.models.hook_io import HookCall, HookOutcome
from brainbench.models.sandbox import HardeningConfig, ResourceLimits

# Re-exported: providers and their tests import the call shapes from here.
__all__ = ["Executor", "ExecutorError", "HookCall", "HookOutcome", "InvocationMode", "RunContext", "SeamLaunch",
           "SeamProcess"]

InvocationMode = Literal["exec", "stream"]


@dataclass(frozen=True)
class RunContext:
    """What every seam of one run shares; given to the provider once, at ``prepare``."""

    run_id: str
    # Where hooks reach the brain (any database on the server: only host/socket matter).
    database_url: str | None = None
    work_root: Path | None = None
    # Seam processes per seam answering at once (stream pool size).
    pool_size: int = 2
    # What every seam may use and do (Docker enforces both per container; the local
    # provider runs our own trusted adapters and applies only the call deadlines).
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    hardening: HardeningConfig = field(default_factory=HardeningConfig)
    # A TCP brain in a container: the container to attach to the run's internal network
    # (None: found by compose service or name), and the host[:port] seams use for it
    # (None: the network alias when the runner's URL is loopback, else the URL's host).
    brain_container: str | None = None
    container_db_host: str | None = None
    # Told when a provider starts a set-up phase the run would otherwise wait on in silence
    # (a seam's private brain server); one line of plain text.
    notify: Callable[[str], None] | None = None
    # Seam → the directory of its own gate socket to the shared brain (brain/gate.py): a container
    # mounts that one instead of the server's socket directory, so it reaches no other seam's gate.
    seam_sockets: Mapping[str, str] = field(default_factory=dict)


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
    # True: ``mode`` is only the run's default, and an image that does not declare it
    # (label ``io.brainbench.modes``) runs in exec mode instead.
    mode_from_image: bool = False


class ExecutorError(RuntimeError):
    """The provider failed outside any hook call (no engine, no image, a container would not start).

    Failures *of* a hook are graded outcomes; this is the run being unable to go on.
    """


class SeamProcess(abc.ABC):
    """A started seam that can answer hook calls until stopped."""

    # The mode it actually runs in (a production image may not speak stream).
    mode: InvocationMode = "exec"
    # Set by providers that run images: the reference the seam's image was started from, and what
    # the result records as that image's identity.
    image_ref: str | None = None
    image_digest: str | None = None
    # The CPU quota the seam runs under (a container's); None: none.
    cpus: float | None = None
    # Superuser URL of a brain server of the seam's own (seed contract ``"server": "private"``),
    # reachable by the runner and by this seam alone; None when the seam uses the shared server.
    brain_server_url: str | None = None

    @abc.abstractmethod
    async def call(self, call: HookCall) -> HookOutcome: ...

    @property
    def image_labels(self) -> Mapping[str, str]:
        """The labels of the seam's image; empty for a seam that runs no image."""
        return {}

    def run_command(self, command: Sequence[str], call: HookCall) -> HookOutcome:
        """Run another command of the seam's image as its hook runs (blocking): the seed contract's
        ``init`` and ``seed``.  Only providers that run images can."""
        raise ExecutorError(f"the {type(self).__name__} seam runs no image, so it cannot run {list(command)}")

    @abc.abstractmethod
    async def stop(self) -> None: ...


async def stop_all(seams: list[SeamProcess]) -> None:
    """Stop every seam, shielded from cancellation (an interrupted run still releases them); one
    seam failing to stop never keeps the others running."""
    import anyio

    with anyio.CancelScope(shield=True):
        for seam in seams:
            with contextlib.suppress(Exception):
                await seam.stop()
    seams.clear()


class Executor(abc.ABC):
    """A provider of seam processes (local subprocess, docker, ...)."""

    name: ClassVar[str]

    async def prepare(self, context: RunContext) -> None:  # noqa: B027 - optional for providers
        """Once per run, before any ``start``: sweep dead leftovers, build run-scoped resources."""

    @abc.abstractmethod
    async def start(self, launch: SeamLaunch) -> SeamProcess:
        """A seam that is warm and answering; raises ``ExecutorError`` with one clear line if not."""

    async def close(self, interrupted: bool = False) -> None:  # noqa: B027 - optional for providers
        """Release run-scoped resources (containers, networks, pools).  ``interrupted``: the
        run was cancelled; release without waiting on anything graceful."""

    @classmethod
    def cleanup(cls, run_id: str | None = None) -> list[str]:
        """Remove what dead runs (or run ``run_id``) left behind; returns what was removed."""
        return []
