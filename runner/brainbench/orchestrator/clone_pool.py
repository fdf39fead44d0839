"""Clones of an image-seeded seam's template made ahead of the fixtures that need them, and dropped behind.

Copying gbrain's 65-table template takes seconds on a loaded machine and dropping a clone a
second more; both are Postgres work that no hook answer depends on.  Done inside a fixture's
``--jobs`` slot they sit on the critical path; here one background task per seam keeps up to
``ahead`` clones ready (``ahead`` is the run's ``--jobs``: one per slot) and drops the clones
fixtures hand back, so a fixture's slot holds only its seed, warm-up and replay.

A clone is still made for one fixture and dropped after it: no brain is ever reused.  Clones
left unclaimed when the replay ends (a seam whose init or server failed claims none) are dropped
with the pool.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator

import anyio
from anyio.abc import TaskGroup

from brainbench.brain.guarded import ImageServerError
from brainbench.brain.image_brains import ImageBrain
from brainbench.orchestrator.image_seed import SeededSeam


class ClonePool:
    def __init__(self, seam: SeededSeam, needed: int, ahead: int) -> None:
        self.seam = seam
        self.needed = needed
        send, receive = anyio.create_memory_object_stream[ImageBrain | ImageServerError](max(1, ahead))
        self._send, self._receive = send, receive
        self._dropping: set[ImageBrain] = set()
        self._made: list[ImageBrain] = []
        self._tg: TaskGroup | None = None

    async def _fill(self) -> None:
        """Make the seam's clones one by one, each as soon as the buffer has room for it."""
        seam = self.seam
        async with self._send:
            for _ in range(self.needed):
                if seam.init_error or seam.server_error:
                    return
                try:
                    with seam.clock.timed(seam.harness, "clone"):
                        brain = await seam.in_thread(seam.brains.clone)
                except ImageServerError as exc:
                    await self._send.send(exc)  # the fixture that asks for it reports the failure
                    return
                self._made.append(brain)
                await self._send.send(brain)

    async def take(self) -> ImageBrain:
        """The next ready clone (waits while the pool makes it); ImageServerError as seam.brains.clone."""
        try:
            got = await self._receive.receive()
        except anyio.EndOfStream:
            # More asked for than planned (cannot happen in a run): make one here.
            with self.seam.clock.timed(self.seam.harness, "clone"):
                return await self.seam.in_thread(self.seam.brains.clone)
        if isinstance(got, ImageServerError):
            raise got
        return got

    def give_back(self, brain: ImageBrain) -> None:
        """Drop ``brain`` in the background: the fixture's slot does not wait for it."""
        if self._tg is None:
            raise RuntimeError("the pool is not running")
        self._dropping.add(brain)
        self._tg.start_soon(self._drop, brain)

    async def _drop(self, brain: ImageBrain) -> None:
        with anyio.CancelScope(shield=True):
            with contextlib.suppress(Exception):
                await self.seam.drop(brain)
            self._dropping.discard(brain)
            with contextlib.suppress(ValueError):
                self._made.remove(brain)

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[ClonePool]:
        """The pool's tasks live in here; on exit unclaimed clones are dropped and drops awaited."""
        async with anyio.create_task_group() as tg:
            self._tg = tg
            filler = anyio.CancelScope()

            async def fill() -> None:
                with filler:
                    await self._fill()

            tg.start_soon(fill)
            try:
                yield self
            finally:
                filler.cancel()
                with anyio.CancelScope(shield=True):
                    await self._receive.aclose()
                    for brain in [b for b in self._made if b not in self._dropping]:
                        self._dropping.add(brain)
                        tg.start_soon(self._drop, brain)
        self._tg = None


def ahead_for(jobs: int) -> int:
    """Clones kept ready per seam: one per fixture slot (at least one)."""
    return max(1, math.ceil(jobs))
