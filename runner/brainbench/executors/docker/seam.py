"""A started Docker seam: one warm container, calls as execs or through the stream pool."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ..base import HookCall, HookOutcome, SeamLaunch, SeamProcess
from .call_client import CallServer, CallServerError
from .container import SeamContainer
from .exec_call import exec_call
from .failures import describe
from .stream_pool import StreamPool, StreamSession

if TYPE_CHECKING:
    from .provider import DockerExecutor

log = logging.getLogger(__name__)


def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


class DockerSeamProcess(SeamProcess):
    def __init__(self, executor: DockerExecutor, launch: SeamLaunch) -> None:
        self.executor = executor
        self.launch = launch
        self.seam = launch.seam
        self.box = SeamContainer(executor, launch)
        self.pool: StreamPool | None = None
        # Exec mode: the in-container call server, or None where the image cannot run it
        # (no Python 3) and every call is a ``docker exec``.
        self.server: CallServer | None = None

    # -- what callers read -------------------------------------------------------------------
    @property
    def mode(self) -> str:  # type: ignore[override]
        return self.box.mode

    @property
    def image_digest(self) -> str | None:  # type: ignore[override]
        return self.box.facts.digest if self.box.facts else None

    @property
    def image_labels(self) -> dict[str, str]:  # type: ignore[override]
        return dict(self.box.facts.labels) if self.box.facts else {}

    @property
    def brain_server_url(self) -> str | None:  # type: ignore[override]
        return self.box.private.url if self.box.private else None

    @property
    def container(self) -> Any:
        return self.box.container

    @property
    def hook_cmd(self) -> list[str]:
        return self.box.hook_cmd

    @property
    def _sessions(self) -> dict[int, StreamSession]:
        return self.pool.sessions if self.pool else {}

    def describe(self) -> dict[str, Any]:
        return self.box.describe()

    # -- lifecycle ---------------------------------------------------------------------------
    async def boot(self, handshake_s: float) -> None:
        """Create the container and, in stream mode, bring every pool slot to a handshake."""
        await anyio.to_thread.run_sync(self.box.boot, abandon_on_cancel=True)
        if self.box.mode == "stream":
            self.pool = StreamPool(self.box, self.executor.pool_size)
            await self.pool.warm(handshake_s)
        elif self.executor.config.call_server:
            await anyio.to_thread.run_sync(self._start_server, handshake_s, abandon_on_cancel=True)

    def _start_server(self, handshake_s: float) -> None:
        server = CallServer(self.box)
        try:
            server.start(handshake_s)
        except Exception as exc:
            log.info("docker: %s: %s; using docker exec per call", self.seam, describe(exc))
            return
        self.server = server

    async def stop(self) -> None:
        await anyio.to_thread.run_sync(self._stop_sync, abandon_on_cancel=True)
        self.executor.forget(self)

    def _stop_sync(self) -> None:
        if self.pool is not None:
            self.pool.close()
        if self.server is not None:
            self.server.alive = False
        self.box.remove()
        self.box.remove_private_brain()

    # -- calls -------------------------------------------------------------------------------
    async def call(self, call: HookCall) -> HookOutcome:
        outcome = await self._call(call)
        if outcome.infra_error or outcome.exit_code not in (0, None) or outcome.timed_out:
            log.debug("docker: %s call: exit=%s timed_out=%s infra=%s stderr=%s", self.seam,
                      outcome.exit_code, outcome.timed_out, outcome.infra_error,
                      outcome.stderr[-2000:].decode("utf-8", "replace"))
        return outcome

    async def _call(self, call: HookCall) -> HookOutcome:
        if self.pool is not None:
            obj = _json_object(call.payload)
            if obj is not None:
                return await self.pool.call(call, obj)
            # Not a JSON object (empty stdin, arrays, garbage): the line protocol cannot
            # carry it verbatim, so that call goes through exec with the exact bytes.
        server = self.server
        if server is not None:
            return await anyio.to_thread.run_sync(self._server_call, server, call, abandon_on_cancel=True)
        return await anyio.to_thread.run_sync(exec_call, self.box, call, abandon_on_cancel=True)

    def _server_call(self, server: CallServer, call: HookCall) -> HookOutcome:
        started = time.perf_counter()
        try:
            return server.call(call)
        except (CallServerError, OSError, ValueError, KeyError, TypeError) as exc:
            # An infrastructure fault, never the hook's grade; bring a fresh server up for
            # the next call (or fall back to docker exec if it will not start).
            if self.server is server:
                self.server = None
                server.close()
                self._start_server(self.executor.config.stream_handshake_s)
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - started) * 1000,
                               infra_error=describe(exc))

    def run_command(self, command: Sequence[str], call: HookCall) -> HookOutcome:
        """Run any command the way a hook runs: same container, user, network, limits and
        in-container timeout (``doctor`` probes, the seed contract's init and seed)."""
        return exec_call(self.box, call, list(command))
