"""At most as many hook calls in flight to a production image as its container has CPUs.

A real memory system's hook may keep a deadline of its own and answer nothing past it (gbrain's
hook gives up after 800 ms).  Under ``--jobs`` above the container's CPUs, its calls then compete
for the CPU with each other, and what it answers depends on our concurrency rather than on the
memory system: measured with gbrain's image at ``--jobs`` 4 on 2 cores, 16 turn rows differed from
the ``--jobs`` 1 and 2 runs (docs/GBRAIN.md, "How many jobs").  So a production image's calls wait
for a slot here, outside the call's own timing and timeout, and the fixtures' other work (clones,
seeds, grading) still overlaps.  Our own adapters keep no deadlines and are not slotted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import anyio

from brainbench.executors.base import HookCall, HookOutcome, SeamProcess


def call_slots(cpus: float | None, cores: int) -> int:
    """Calls in flight for a container with ``cpus`` (None: no quota, the machine's ``cores``)."""
    return max(1, math.ceil(cpus) if cpus else cores)


class SlottedProcess(SeamProcess):
    """``inner`` with its hook calls limited to ``slots`` at once; everything else passes through."""

    def __init__(self, inner: SeamProcess, slots: int) -> None:
        self.inner = inner
        self.slots = slots
        self._limiter = anyio.CapacityLimiter(slots)
        self.mode = inner.mode
        self.image_ref = inner.image_ref
        self.image_digest = inner.image_digest
        self.cpus = inner.cpus
        self.brain_server_url = inner.brain_server_url

    async def call(self, call: HookCall) -> HookOutcome:
        async with self._limiter:
            return await self.inner.call(call)

    @property
    def image_labels(self) -> Mapping[str, str]:
        return self.inner.image_labels

    def run_command(self, command: Sequence[str], call: HookCall) -> HookOutcome:
        return self.inner.run_command(command, call)

    async def stop(self) -> None:
        await self.inner.stop()
