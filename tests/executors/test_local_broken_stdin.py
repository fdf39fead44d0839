"""A hook that closed its stdin before we wrote to it leaves no traceback on the runner's stderr.

The race itself (the hook gone between the loop's look at the pipe and our write) cannot be
staged on demand, so this checks what it leaves behind: a close waiter holding a
``BrokenPipeError`` that nobody retrieves, logged by asyncio when it is collected.
"""

from __future__ import annotations

import asyncio
import gc
import logging

import anyio
import pytest
from brainbench.executors.local import hush_broken_hook_stdin


def _abandon(exc: BaseException) -> None:
    future = asyncio.get_running_loop().create_future()
    future.set_exception(exc)
    del future
    gc.collect()


def _logged(caplog: pytest.LogCaptureFixture, hush: bool, exc: BaseException) -> list[str]:
    async def main() -> None:
        if hush:
            hush_broken_hook_stdin()
            hush_broken_hook_stdin()  # a second seam's start: one handler, not two
        _abandon(exc)

    caplog.clear()
    with caplog.at_level(logging.ERROR, logger="asyncio"):
        anyio.run(main)
    return [r.getMessage() for r in caplog.records if "never retrieved" in r.getMessage()]


def test_an_abandoned_broken_pipe_is_logged_without_the_hush(caplog: pytest.LogCaptureFixture) -> None:
    assert _logged(caplog, False, BrokenPipeError(32, "Broken pipe"))


@pytest.mark.parametrize("exc", [BrokenPipeError(32, "Broken pipe"), ConnectionResetError(104, "reset")])
def test_the_hush_drops_a_broken_hook_pipe(caplog: pytest.LogCaptureFixture, exc: BaseException) -> None:
    assert _logged(caplog, True, exc) == []


def test_the_hush_keeps_every_other_unretrieved_error(caplog: pytest.LogCaptureFixture) -> None:
    assert _logged(caplog, True, ValueError("a real bug"))
