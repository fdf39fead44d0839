"""Where a run's wall time went (``_meta.phases``), as rows for the terminal and the HTML report."""

from __future__ import annotations

from brainbench.models.phases import PhaseTime, RunPhases, SeamPhases

HEADER = ["seam", "image", "template+init", "clone", "seed", "brain start", "hook calls", "p50", "p95",
          "over deadline", "write-back", "operations", "teardown"]


def _phase(phase: PhaseTime | None) -> str:
    return f"{phase.total_s:.2f} s ({phase.count}×)" if phase is not None else "—"


def _ms(value: float | None) -> str:
    return f"{value:.0f} ms" if value is not None else "—"


def seam_row(seam: SeamPhases) -> list[str]:
    calls = seam.hook_calls
    return [seam.harness, seam.image or "(ours)", _phase(seam.template_init), _phase(seam.clone),
            _phase(seam.seed), _phase(seam.brain_start), f"{calls.total_s:.2f} s ({calls.count}×)",
            _ms(calls.p50_ms), _ms(calls.p95_ms), f"{calls.over_deadline} over {calls.deadline_ms:.0f} ms",
            _phase(seam.write_back), _phase(seam.operations), _phase(seam.teardown)]


def rows(phases: RunPhases) -> list[list[str]]:
    return [seam_row(s) for s in phases.seams]


def summary_line(phases: RunPhases) -> str:
    """The run's wall time and each phase's share of the recorded phase time."""
    shares = ", ".join(f"{name.replace('_', ' ')} {share:.0%}" for name, share in
                       sorted(phases.shares().items(), key=lambda kv: -kv[1]) if share > 0)
    return (f"wall {phases.wall_s:.1f} s at --jobs {phases.jobs}; share of phase time: {shares or 'none recorded'} "
            "(phases of concurrent fixtures overlap, so their sum can exceed the wall time)")
