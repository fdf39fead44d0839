"""A production image gets at most as many hook calls in flight as its container has CPUs
(orchestrator/call_slots.py): its own deadlines then do not depend on --jobs."""

from __future__ import annotations

import time

import anyio
from brainbench.executors.base import HookCall, HookOutcome, SeamProcess
from brainbench.orchestrator.call_slots import SlottedProcess, call_slots


class CountingSeam(SeamProcess):
    """Answers after a pause and remembers how many calls it held at once."""

    def __init__(self) -> None:
        self.mode = "exec"
        self.image_ref = "example/memory:1"
        self.cpus = 2.0
        self.brain_server_url = "postgresql://private"
        self.now = 0
        self.most = 0

    async def call(self, call: HookCall) -> HookOutcome:
        self.now += 1
        self.most = max(self.most, self.now)
        began = time.perf_counter()
        await anyio.sleep(0.05)
        self.now -= 1
        return HookOutcome(0, call.payload, b"", False, (time.perf_counter() - began) * 1000)

    def run_command(self, command: list[str], call: HookCall) -> HookOutcome:  # type: ignore[override]
        return HookOutcome(0, " ".join(command).encode(), b"", False, 1.0)

    async def stop(self) -> None:
        self.now = -1


def test_slots_follow_the_containers_cpus() -> None:
    assert call_slots(2.0, 8) == 2
    assert call_slots(1.5, 8) == 2  # a part of a CPU still runs a call
    assert call_slots(0.5, 8) == 1
    assert call_slots(None, 4) == 4  # no quota: the machine's cores


def test_calls_beyond_the_slots_wait_for_one() -> None:
    inner = CountingSeam()
    slotted = SlottedProcess(inner, 2)
    answers: list[HookOutcome] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:
            for n in range(6):
                async def one(n: int = n) -> None:
                    answers.append(await slotted.call(HookCall(str(n).encode(), {}, 10)))
                tg.start_soon(one)

    began = time.perf_counter()
    anyio.run(main)
    assert inner.most == 2  # six calls at once, two in the image
    assert sorted(a.stdout for a in answers) == [str(n).encode() for n in range(6)]
    assert time.perf_counter() - began >= 0.14  # three rounds of two
    # Everything else is the image's, unchanged.
    assert (slotted.mode, slotted.image_ref, slotted.cpus, slotted.brain_server_url) == (
        "exec", "example/memory:1", 2.0, "postgresql://private")
    assert slotted.run_command(["seed"], HookCall(b"", {}, 1)).stdout == b"seed"
    anyio.run(slotted.stop)
    assert inner.now == -1
