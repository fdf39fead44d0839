"""The run's phase clock: wall time per seam and phase, summed into ``_meta.phases``.

Most is recorded from the run's one event loop (thread work is timed around its ``await``);
the operations command is timed in its worker thread, where ``setdefault`` and ``append``
are each atomic under the GIL, so plain dicts still suffice.  Concurrent fixtures overlap: the sums are work done,
not a partition of the wall time.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Iterable, Iterator, Mapping

from brainbench.models.phases import HOOK_DEADLINE_MS, SEEDED_PHASES, HookCallTimes, PhaseTime, RunPhases, SeamPhases


def percentile(ordered: list[float], q: float) -> float | None:
    """Nearest-rank percentile of an ascending list (None when empty)."""
    if not ordered:
        return None
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def call_times(durations_ms: Iterable[float], deadline_ms: float = HOOK_DEADLINE_MS) -> HookCallTimes:
    ordered = sorted(durations_ms)
    if not ordered:
        return HookCallTimes(deadline_ms=deadline_ms)

    def ms(value: float | None) -> float | None:
        return None if value is None else round(value, 3)

    return HookCallTimes(count=len(ordered), p50_ms=ms(percentile(ordered, 0.5)), p95_ms=ms(percentile(ordered, 0.95)),
                         max_ms=ms(ordered[-1]), total_s=round(sum(ordered) / 1000, 3), deadline_ms=deadline_ms,
                         over_deadline=sum(1 for d in ordered if d > deadline_ms))


class PhaseClock:
    def __init__(self) -> None:
        self.started = time.monotonic()
        self.phases: dict[str, dict[str, list[float]]] = {}
        self.calls: dict[str, list[float]] = {}

    def add(self, harness: str, phase: str, seconds: float) -> None:
        self.phases.setdefault(harness, {}).setdefault(phase, []).append(seconds)

    @contextlib.contextmanager
    def timed(self, harness: str, phase: str) -> Iterator[None]:
        began = time.monotonic()
        try:
            yield
        finally:
            self.add(harness, phase, time.monotonic() - began)

    def hook_calls(self, harness: str, durations_ms: Iterable[float]) -> None:
        self.calls.setdefault(harness, []).extend(durations_ms)

    def seam(self, harness: str, image: str | None, image_seeded: bool) -> SeamPhases:
        recorded = self.phases.get(harness, {})
        phases = {name: PhaseTime(count=len(recorded.get(name, [])), total_s=round(sum(recorded.get(name, [])), 3))
                  for name in SEEDED_PHASES} if image_seeded else {}
        return SeamPhases(harness=harness, image=image, image_seeded=image_seeded,
                          hook_calls=call_times(self.calls.get(harness, [])), **phases)

    def summary(self, seams: Mapping[str, tuple[str | None, bool]], jobs: int) -> RunPhases:
        """``seams``: harness → (image, whether the image seeds its own brain)."""
        return RunPhases(wall_s=round(time.monotonic() - self.started, 3), jobs=max(1, jobs),
                         seams=[self.seam(h, image, seeded) for h, (image, seeded) in seams.items()])


def describe(seam: SeamPhases) -> str:
    """One progress line for a seam's phases."""
    def part(label: str, phase: PhaseTime | None) -> str:
        return f"{label} {phase.total_s:.1f} s/{phase.count}" if phase is not None else ""

    calls = seam.hook_calls
    hooks = (f"hook calls {calls.count} (p50 {calls.p50_ms or 0:.0f} ms, p95 {calls.p95_ms or 0:.0f} ms, "
             f"total {calls.total_s:.1f} s, {calls.over_deadline} over {calls.deadline_ms:.0f} ms)")
    parts = [part("template+init", seam.template_init), part("clone", seam.clone), part("seed", seam.seed),
             part("brain start", seam.brain_start), hooks, part("write-back", seam.write_back),
             part("operations", seam.operations), part("teardown", seam.teardown)]
    return f"seam {seam.harness}: " + ", ".join(p for p in parts if p)
