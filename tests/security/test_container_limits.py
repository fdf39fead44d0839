"""One output cap for every provider and mode: a flooding hook is killed at once, graded oversize.

Local and docker, exec and stream, run the same hostile hook (hostile/flood.py).  The
call must end long before its timeout (the hook is killed at the cap, not waited for),
the output is discarded, the grade is ``oversize``, and the seam answers the next call.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from brainbench.executors.base import HookCall, SeamLaunch
from brainbench.executors.limits import MAX_OUTPUT_BYTES, MAX_STREAM_LINE_BYTES, LineSplitter, OutputLimitExceeded
from brainbench.executors.local import LocalExecutor
from brainbench.harnesses.grading import grade
from container_kit import CLIENT, build, needs_docker, payload, run_id, with_seam  # noqa: F401

FLOOD = Path(__file__).parent / "hostile" / "flood.py"
TIMEOUT_S = 30.0
PROVIDERS = [pytest.param(("local", m), id=f"local-{m}") for m in ("exec", "stream")] + [
    pytest.param(("docker", m), id=f"docker-{m}", marks=needs_docker) for m in ("exec", "stream")]


@pytest.fixture(scope="module")
def flood_image() -> str:
    if CLIENT is None:
        pytest.skip("no docker")
    return build("flood", 'COPY flood.py /flood.py\nUSER 10001:10001\nENTRYPOINT ["python3", "/flood.py"]\n',
                 {"flood.py": FLOOD.read_bytes()})


def calls(provider: tuple[str, str], prompts: list[str], request: pytest.FixtureRequest,
          rid: str) -> list[tuple[Any, float]]:
    kind, mode = provider

    async def body(proc: Any) -> list[tuple[Any, float]]:
        out = []
        for prompt in prompts:
            started = time.monotonic()
            outcome = await proc.call(HookCall(payload(prompt), {}, TIMEOUT_S))
            out.append((outcome, time.monotonic() - started))
        return out

    if kind == "docker":
        image = request.getfixturevalue("flood_image")
        command = ("python3", "/flood.py", "--stream") if mode == "stream" else ()
        return with_seam(image, rid, mode, body, command=command)

    async def local() -> list[tuple[Any, float]]:
        command = (sys.executable, str(FLOOD), *(("--stream",) if mode == "stream" else ()))
        proc = await LocalExecutor().start(SeamLaunch("claude_code", command, mode))  # type: ignore[arg-type]
        try:
            return await body(proc)
        finally:
            await proc.stop()

    return anyio.run(local)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_flooding_hooks_are_killed_at_the_cap(provider: tuple[str, str], request: pytest.FixtureRequest,
                                              run_id: str) -> None:  # noqa: F811
    prompts = ["flood", "ok", "latin1"] + (["bigjson"] if provider[1] == "stream" else ["errflood"]) + ["ok"]
    results = calls(provider, prompts, request, run_id)
    for prompt, (outcome, wall) in zip(prompts, results, strict=True):
        graded = grade(outcome, "codex")
        if prompt in ("flood", "errflood", "bigjson"):
            assert outcome.oversize and outcome.stdout == b"" and graded.fault == "oversize", (prompt, outcome)
            assert wall < TIMEOUT_S / 3, (prompt, wall)  # killed at the cap, not at the timeout
        elif prompt == "latin1":
            assert outcome.stdout == b"caf\xe9 context\n"
            assert graded == grade(outcome, "openclaw") and graded.fault == "contract_violation"
            assert graded.context is None and "not UTF-8" in graded.detail
            claude = grade(outcome, "claude")
            assert claude.fault == "contract_violation" and claude.context == "caf\ufffd context"
        else:  # the seam still answers after a killed call
            assert outcome.exit_code == 0 and outcome.stdout == b"honest context\n", outcome


@needs_docker
def test_a_full_tmpfs_is_the_hooks_own_problem(flood_image: str, run_id: str) -> None:  # noqa: F811
    async def body(proc: Any) -> list[Any]:
        return [await proc.call(HookCall(payload(p), {}, TIMEOUT_S)) for p in ("tmpfs", "ok")]

    first, second = with_seam(flood_image, run_id, "exec", body)
    assert first.exit_code == 0 and second.stdout == b"honest context\n"


def test_line_framing_is_linear_and_capped() -> None:
    splitter = LineSplitter(limit=1000)
    assert splitter.feed(b"ab") == [] and splitter.feed(b"c\nde\n\nf") == [b"abc", b"de", b""]
    assert splitter.feed(b"g\n") == [b"fg"]
    # Fed one byte at a time, the pending line is never rescanned: the next search starts
    # where the last one ended (the quadratic scan this replaces took minutes on 1 MiB).
    big = LineSplitter(limit=MAX_STREAM_LINE_BYTES)
    for n in range(1, 1001):
        big.feed(b"x")
        assert big._scanned == n
    with pytest.raises(OutputLimitExceeded):
        LineSplitter(limit=10).feed(b"x" * 11)
    assert MAX_OUTPUT_BYTES == 1024 * 1024
