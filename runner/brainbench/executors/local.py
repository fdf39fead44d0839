"""Local-process provider: seams run as subprocesses of the runner.

exec mode spawns one process per hook call (how real hooks run); stream mode
keeps a small pool of warm processes speaking one JSON per line.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
from collections.abc import Mapping
from subprocess import DEVNULL, PIPE
from typing import ClassVar

import anyio
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.buffered import BufferedByteReceiveStream

from brainbench.executors.base import (
    Executor,
    ExecutorError,
    HookCall,
    HookOutcome,
    RunContext,
    SeamLaunch,
    SeamProcess,
    stop_all,
)
from brainbench.executors.hook_env import inherited_environment
from brainbench.executors.limits import (
    MAX_OUTPUT_BYTES,
    MAX_STREAM_LINE_BYTES,
    CappedBuffer,
    OutputLimitExceeded,
    decode_stream_text,
    oversize_outcome,
    stream_handshake_error,
)
from brainbench.models import bounded_json
from brainbench.models.stream_codec import HANDSHAKE_INPUT, StreamProtocolError, decode_response, encode_request

# Long enough for an interpreter and its imports on a loaded 2-core machine.
WARM_UP_TIMEOUT_S = 30.0


def _kill_group(pid: int) -> None:
    # Hooks run in their own session so a leaked grandchild dies with them.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


_UNRETRIEVED = "Future exception was never retrieved"


def hush_broken_hook_stdin() -> None:
    """Keep a hook that closed its stdin early from printing a traceback on the runner's stderr.

    When a hook exits (or closes stdin) between the loop's last look at the pipe and our write,
    CPython 3.11's asyncio stores the ``BrokenPipeError`` on the pipe's close waiter, which nobody
    awaits, and logs it with a traceback when the waiter is collected (seen from the runner image's
    Python 3.11.2 with ``/bin/false`` as a hook).  The call itself already has its outcome: the
    hook's exit is graded.  Only that one log entry for a broken or reset pipe is dropped on the
    running loop; anything else reaches the handler it had.
    """
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return  # not on asyncio: nothing of its to hush
    previous = loop.get_exception_handler()
    if getattr(previous, "hushes_broken_stdin", False):
        return

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, object]) -> None:
        if context.get("message") == _UNRETRIEVED and isinstance(
                context.get("exception"), (BrokenPipeError, ConnectionResetError)):
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    handler.hushes_broken_stdin = True  # type: ignore[attr-defined]
    loop.set_exception_handler(handler)


async def _drain(stream: ByteReceiveStream | None, sink: CappedBuffer) -> None:
    if stream is None:
        return
    with contextlib.suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
        async for chunk in stream:
            sink.add(chunk)


class _ExecSeam(SeamProcess):
    mode = "exec"

    def __init__(self, launch: SeamLaunch) -> None:
        self.launch = launch

    async def call(self, call: HookCall) -> HookOutcome:
        env = {**inherited_environment(), **self.launch.env, **call.env}
        started = time.perf_counter()
        try:
            proc = await anyio.open_process(list(self.launch.command), stdin=PIPE, stdout=PIPE, stderr=PIPE,
                                            env=env, cwd=call.cwd, start_new_session=True)
        except OSError as exc:
            return HookOutcome(None, b"", b"", False, 0.0, infra_error=f"cannot start seam: {exc}")
        # The deadline covers writing stdin (a hook that never reads it would block a large payload
        # forever) and reading stdout/stderr to EOF: like Claude Code and Codex, the call is over
        # only when the pipes close, so a grandchild that escaped the group with our stdout is a
        # timeout, not a hang of the runner.
        try:
            return await self._supervise(proc, call, started)
        finally:
            # Also on cancellation (an interrupted run): the hook's group never outlives its call.
            _kill_group(proc.pid)
            with anyio.CancelScope(shield=True):
                await proc.aclose()

    async def _supervise(self, proc: Process, call: HookCall, started: float) -> HookOutcome:
        out, err = CappedBuffer("stdout"), CappedBuffer("stderr")
        over: OutputLimitExceeded | None = None
        with anyio.move_on_after(call.timeout_s) as scope:
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_drain, proc.stdout, out)
                    tg.start_soon(_drain, proc.stderr, err)
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError,
                                             BrokenPipeError):
                        assert proc.stdin is not None
                        await proc.stdin.send(call.payload)
                    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError,
                                             BrokenPipeError):
                        assert proc.stdin is not None
                        await proc.stdin.aclose()
                    await proc.wait()
                    # The hook is done; whatever is left in its group is a leak holding our pipes open.
                    _kill_group(proc.pid)
            except* OutputLimitExceeded as group:
                over = group.exceptions[0]  # type: ignore[assignment]
        timed_out = scope.cancelled_caught
        _kill_group(proc.pid)
        await proc.wait()
        elapsed = (time.perf_counter() - started) * 1000
        if over is not None:
            return oversize_outcome(over, elapsed)
        if timed_out:  # like Claude Code: a timed-out hook's output is discarded
            return HookOutcome(None, b"", b"", True, elapsed)
        return HookOutcome(proc.returncode, bytes(out), bytes(err), False, elapsed)

    async def stop(self) -> None:
        return None


class _StreamWorker:
    def __init__(self, launch: SeamLaunch) -> None:
        self.launch = launch
        self.proc: Process | None = None
        self.reader: BufferedByteReceiveStream | None = None
        self.next_id = 1

    async def _ensure(self) -> Process:
        if self.proc is None or self.proc.returncode is not None:
            self.proc = await anyio.open_process(list(self.launch.command), stdin=PIPE, stdout=PIPE, stderr=DEVNULL,
                                                 env={**inherited_environment(), **self.launch.env},
                                                 start_new_session=True)
            assert self.proc.stdout is not None
            self.reader = BufferedByteReceiveStream(self.proc.stdout)
        return self.proc

    async def kill(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc.pid)
            with anyio.move_on_after(5):
                await self.proc.wait()
            await self.proc.aclose()
        self.proc = None
        self.reader = None

    async def call(self, call: HookCall, env: Mapping[str, str]) -> HookOutcome:
        started = time.perf_counter()
        try:
            proc = await self._ensure()
        except OSError as exc:
            return HookOutcome(None, b"", b"", False, 0.0, infra_error=f"cannot start seam: {exc}")
        rid = self.next_id
        self.next_id += 1
        raw: bytes | None = None
        with anyio.move_on_after(call.timeout_s) as scope:
            try:
                assert proc.stdin is not None and self.reader is not None
                await proc.stdin.send(encode_request(rid, env, _stream_input(call.payload), call.cwd))
                raw = await self.reader.receive_until(b"\n", MAX_STREAM_LINE_BYTES)
            except anyio.DelimiterNotFound:
                await self.kill()
                return oversize_outcome(OutputLimitExceeded("stream response line", MAX_STREAM_LINE_BYTES),
                                        (time.perf_counter() - started) * 1000)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError, anyio.ClosedResourceError,
                    BrokenPipeError):
                raw = None
        elapsed = (time.perf_counter() - started) * 1000
        if scope.cancelled_caught:
            await self.kill()
            return HookOutcome(None, b"", b"", True, elapsed)
        if raw is None:
            code = proc.returncode
            await self.kill()
            return HookOutcome(code if code is not None else 1, b"", b"stream process died", False, elapsed)
        try:
            code, stdout, stderr = decode_response(raw, rid)
        except StreamProtocolError as exc:
            await self.kill()
            return HookOutcome(1, b"", str(exc).encode(), False, elapsed)
        out, err = decode_stream_text(stdout), decode_stream_text(stderr)
        for name, data in (("stdout", out), ("stderr", err)):
            if len(data) > MAX_OUTPUT_BYTES:
                await self.kill()  # the same rule as exec: over the cap, the hook is killed
                return oversize_outcome(OutputLimitExceeded(name, MAX_OUTPUT_BYTES), elapsed)
        return HookOutcome(code, out, err, False, elapsed)


def _stream_input(payload: bytes) -> object:
    """The request's ``input``: the payload's JSON, or its text when it is not JSON."""
    try:
        return bounded_json.loads(payload)
    except ValueError:
        return payload.decode("utf-8", "surrogateescape")


class _StreamSeam(SeamProcess):
    mode = "stream"

    def __init__(self, launch: SeamLaunch, size: int) -> None:
        self.launch = launch
        self.workers = [_StreamWorker(launch) for _ in range(max(1, size))]
        self.idle: list[_StreamWorker] = list(self.workers)
        self.available = anyio.Semaphore(len(self.workers))

    async def warm(self, timeout_s: float = WARM_UP_TIMEOUT_S) -> None:
        """Start every worker and wait until it answers, so interpreter start-up and
        imports are never charged to a graded turn's timeout."""
        ping = HookCall(json.dumps(HANDSHAKE_INPUT).encode(), {}, timeout_s)
        failures: list[str] = []

        async def one(worker: _StreamWorker) -> None:
            outcome = await worker.call(ping, {})
            if outcome.timed_out:
                failures.append(stream_handshake_error(self.launch.seam, timeout_s))
            elif outcome.infra_error or outcome.exit_code is None or outcome.stderr == b"stream process died":
                failures.append(f"{self.launch.seam}: the stream process did not answer its handshake "
                                f"({outcome.infra_error or outcome.stderr.decode(errors='replace')})")

        async with anyio.create_task_group() as tg:
            for worker in self.workers:
                tg.start_soon(one, worker)
        if failures:
            await self.stop()
            raise ExecutorError(failures[0])

    async def call(self, call: HookCall) -> HookOutcome:
        async with self.available:
            worker = self.idle.pop()
            try:
                return await worker.call(call, call.env)
            finally:
                self.idle.append(worker)

    async def stop(self) -> None:
        for worker in self.workers:
            if worker.proc is not None and worker.proc.stdin is not None:
                with contextlib.suppress(Exception):
                    await worker.proc.stdin.aclose()
            await worker.kill()


class LocalExecutor(Executor):
    """Seams as subprocesses of the runner.  They run with the runner's own privileges:
    local mode is for code you trust (our contract adapters); see docs/EXECUTORS.md."""

    name: ClassVar[str] = "local"

    def __init__(self, pool_size: int = 2) -> None:
        self.pool_size = pool_size
        self._seams: list[SeamProcess] = []

    async def prepare(self, context: RunContext) -> None:
        self.pool_size = context.pool_size

    async def start(self, launch: SeamLaunch) -> SeamProcess:
        hush_broken_hook_stdin()
        if not launch.command:
            raise ExecutorError(f"{launch.seam}: no hook command to run locally"
                                + (f" (image {launch.image} needs the docker executor)" if launch.image else ""))
        if launch.mode == "exec":
            seam: SeamProcess = _ExecSeam(launch)
        else:
            seam = _StreamSeam(launch, self.pool_size)
            await seam.warm()
        self._seams.append(seam)
        return seam

    async def close(self, interrupted: bool = False) -> None:
        await stop_all(self._seams)
