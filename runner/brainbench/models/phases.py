"""``_meta.phases``: where a run spent its wall time, per seam.

An image-seeded seam (seed contract) costs a run far more than its hook calls: its template
and ``init``, a database clone and a ``seed`` per fixture, the brain's own start (an image's
private server or ``serve``, paid by the warm-up call) and dropping the clones.  These
numbers say which part to make cheaper; they are measurements of one machine at one moment,
never graded and never gated.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

# gbrain's Claude Code hook gives up after 800 ms (its own deadline, not ours): a call over it
# was graded as whatever the hook said after giving up, so a result counts them.
HOOK_DEADLINE_MS = 800.0
# The phases of an image-seeded seam besides its graded hook calls, in the order a fixture meets them.
SEEDED_PHASES = ("template_init", "clone", "seed", "brain_start", "write_back", "operations", "teardown")


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PhaseTime(_Model):
    """One phase of one seam: how many times it ran and their summed wall time."""

    count: int = Field(default=0, ge=0)
    total_s: float = Field(default=0.0, ge=0)


class HookCallTimes(_Model):
    """The graded hook calls of one seam (SessionStart included), timed as the executor saw them."""

    count: int = Field(default=0, ge=0)
    p50_ms: float | None = None
    p95_ms: float | None = None
    max_ms: float | None = None
    total_s: float = Field(default=0.0, ge=0)
    deadline_ms: float = HOOK_DEADLINE_MS
    over_deadline: int = Field(default=0, ge=0, description="Calls that took longer than deadline_ms.")


class SeamPhases(_Model):
    """One seam's phases.  The seeding phases are present only for an image-seeded seam."""

    harness: str
    image: str | None = None
    image_seeded: bool = False
    template_init: PhaseTime | None = Field(
        default=None, description="The seam's brain template: databases, extensions and the image's init.")
    clone: PhaseTime | None = Field(default=None, description="A database cloned from the template per fixture.")
    seed: PhaseTime | None = Field(default=None, description="The image's seed command per fixture.")
    brain_start: PhaseTime | None = Field(
        default=None, description="The ungraded warm-up call per seeded brain (the image's own start, e.g. serve).")
    hook_calls: HookCallTimes = Field(default_factory=HookCallTimes)
    write_back: PhaseTime | None = Field(
        default=None, description="The image's write_back command per session (seed contract v2).")
    operations: PhaseTime | None = Field(
        default=None, description="The image's operations command: write-back's read, continuity's probe and "
                                  "every step of the memory-trust suites (seed contract v2).")
    teardown: PhaseTime | None = Field(default=None, description="Dropping the seeded clones.")


class RunPhases(_Model):
    """The run's wall time and each seam's phases (summed over concurrent fixtures: with
    ``--jobs`` above 1 the phases add up to more than the wall time)."""

    wall_s: float = Field(default=0.0, ge=0)
    jobs: int = Field(default=1, ge=1)
    seams: list[SeamPhases] = Field(default_factory=list)

    def shares(self) -> dict[str, float]:
        """Each phase's share of all the phase time the run recorded (0..1), across seams."""
        totals: dict[str, float] = {}
        for seam in self.seams:
            for name in SEEDED_PHASES:
                phase = getattr(seam, name)
                if phase is not None:
                    totals[name] = totals.get(name, 0.0) + phase.total_s
            totals["hook_calls"] = totals.get("hook_calls", 0.0) + seam.hook_calls.total_s
        whole = sum(totals.values())
        return {k: (v / whole if whole else 0.0) for k, v in totals.items()}
