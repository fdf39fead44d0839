"""A started Docker seam: one warm container, calls as execs or through the stream pool."""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anyio

from brainbench.models import bounded_json

from ..base import HookCall, HookOutcome, SeamLaunch, SeamProcess
from .call_client import CallServer, CallServerError
from .container import SeamContainer
from .exec_call import exec_call
from .failures import describe
from .remote_files import CallFiles, write_by_exec
from .stream_pool import StreamPool, StreamSession

if TYPE_CHECKING:
    from .host import SeamHost

log = logging.getLogger(__name__)


def _json_object(payload: bytes) -> dict[str, Any] | None:
    try:
        value = bounded_json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return None
    return value if isinstance(value, dict) else None


class DockerSeamProcess(SeamProcess):
    def __init__(self, executor: SeamHost, launch: SeamLaunch) -> None:
        self.executor = executor
        self.launch = launch
        self.seam = launch.seam
        self.box = SeamContainer(executor, launch)
        self.pool: StreamPool | None = None
        # Exec mode: the in-container call server.  ``server_capable`` is decided at start:
        # False where the image cannot run it (no Python 3) and every call is a ``docker exec``.
        self.server: CallServer | None = None
        self.server_capable = False
        self.server_variant = "python"
        self._restart = threading.Lock()

    # -- what callers read -------------------------------------------------------------------
    @property
    def mode(self) -> str:  # type: ignore[override]
        return self.box.mode

    @property
    def image_ref(self) -> str:  # type: ignore[override]
        return self.box.image_ref

    @property
    def image_digest(self) -> str | None:  # type: ignore[override]
        return self.box.facts.digest if self.box.facts else None

    @property
    def cpus(self) -> float | None:  # type: ignore[override]
        return self.box.cpus

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
            if not self.executor.remote:
                return
            # The stream protocol carries no files: on a remote engine the call server
            # copies each call's transcript in ahead of the request.
        await anyio.to_thread.run_sync(self._choose_server, handshake_s, abandon_on_cancel=True)

    def _choose_server(self, handshake_s: float) -> None:
        """Decided once, at start: the first call server variant that answers, else ``docker exec``."""
        wanted = self.executor.config.call_server
        variants = {"auto": ["python", "static"], "python": ["python"], "static": ["static"]}.get(wanted, [])
        if self.executor.static_helper is None and "static" in variants:
            variants.remove("static")
        reasons = []
        for variant in variants:
            self.server_variant = variant
            why = self._start_server(handshake_s)
            if why is None:
                self.server_capable = True
                return
            reasons.append(why)
        log.info("docker: %s: %s; using docker exec per call", self.seam,
                 "; ".join(reasons) or f"call server {wanted}")

    def _start_server(self, handshake_s: float, in_call: bool = False) -> str | None:
        """Start the call server; None when it answers, else why not."""
        server = CallServer(self.box, self.server_variant)
        try:
            server.start(handshake_s, in_call)
        except Exception as exc:
            return describe(exc)
        self.server = server
        return None

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
        files = self.box.call_files(call.payload)
        if self.pool is not None:
            obj = _json_object(call.payload)
            if obj is not None:
                if files:
                    failed = await anyio.to_thread.run_sync(self._put_files, files, abandon_on_cancel=True)
                    if failed is not None:
                        return failed
                return await self.pool.call(call, obj)
            # Not a JSON object (empty stdin, arrays, garbage): the line protocol cannot
            # carry it verbatim, so that call goes through exec with the exact bytes.
        if self.server_capable:
            return await anyio.to_thread.run_sync(self._server_call, call, files, abandon_on_cancel=True)
        if files:
            failed = await anyio.to_thread.run_sync(self._put_files, files, abandon_on_cancel=True)
            if failed is not None:
                return failed
        return await anyio.to_thread.run_sync(exec_call, self.box, call, abandon_on_cancel=True)

    def _live_server(self) -> CallServer | str:
        """The running call server, brought back once if it died since the last call (a hook
        may kill it: same uid); else why it will not come, and the call is an infrastructure
        fault the orchestrator's retry brings back here."""
        with self._restart:
            server = self.server
            if server is not None and server.alive:
                return server
            if server is not None:
                self.server = None
                server.close()
            why = self._start_server(self.executor.config.stream_handshake_s, in_call=True)
            if why is not None or self.server is None:
                return f"call server of {self.seam} did not come back: {why}"
            return self.server

    def _drop_server(self, server: CallServer) -> None:
        """After an infrastructure fault: a fresh server next time, and a dead container
        brought back now, so the retried call finds it running."""
        with self._restart:
            if self.server is server:
                self.server = None
                server.close()
        with contextlib.suppress(Exception):
            self.box.ensure_running()

    def _put_files(self, files: CallFiles) -> HookOutcome | None:
        """Copy a call's files in before its hook starts; an infra outcome if that failed."""
        started = time.perf_counter()
        server: CallServer | str | None = self._live_server() if self.server_capable else None
        try:
            if isinstance(server, str):
                raise CallServerError(server)
            if server is not None:
                server.write_files(files)
            else:
                write_by_exec(self.box, files)
        except Exception as exc:
            if isinstance(server, CallServer):
                self._drop_server(server)
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - started) * 1000,
                               infra_error=describe(exc))
        return None

    def _server_call(self, call: HookCall, files: CallFiles | None = None,
                     argv: Sequence[str] | None = None) -> HookOutcome:
        started = time.perf_counter()
        server = self._live_server()
        if isinstance(server, str):
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - started) * 1000, infra_error=server)
        try:
            return server.call(call, files, argv)
        except (CallServerError, OSError, ValueError, KeyError, TypeError) as exc:
            # An infrastructure fault, never the hook's grade.
            self._drop_server(server)
            return HookOutcome(None, b"", b"", False, (time.perf_counter() - started) * 1000,
                               infra_error=describe(exc))

    def run_command(self, command: Sequence[str], call: HookCall) -> HookOutcome:
        """Run any command the way a hook runs: same container, user, network, limits and
        in-container timeout (``doctor`` probes, the seed contract's init, seed, write_back and
        operations).  Through the call server when it runs commands (a ``docker exec`` costs ~70 ms
        of the engine's time, and the memory-trust suites send an image about a thousand
        operations), else by exec."""
        if self.server_capable:
            server = self._live_server()
            if isinstance(server, CallServer) and server.runs_commands:
                return self._server_call(call, argv=list(command))
        return exec_call(self.box, call, list(command))
