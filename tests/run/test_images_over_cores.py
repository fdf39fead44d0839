"""``--jobs`` above an image's CPUs: its hook calls take turns (orchestrator/call_slots.py), and the run says
so, once, before it starts.

Measured on gbrain's image (docs/CHANGELOG.md, 2026-12-03): at ``--jobs`` 4 on 2 cores, 16 turn rows differed
from ``--jobs`` 1 and 2 (its hook gave up at its own 800 ms deadline; a call met the run's 30 s) until its calls
were held to its container's CPUs; then every row was equal.  Our own adapters keep no deadline of their own,
so a run of them says nothing.
"""

from __future__ import annotations

from brainbench.models.config import RunConfig, SeamOverride
from brainbench.orchestrator.launch import images_over_cores


def _config(**seams: str) -> RunConfig:
    return RunConfig(harnesses=["openclaw", "claude-code", "codex"],
                     seams={h.replace("_", "-"): SeamOverride(image=i) for h, i in seams.items()})


def test_more_jobs_than_the_images_cpus_says_its_calls_take_turns() -> None:
    # The other seams run as local processes: the image's container is the only one, with both cores.
    note = images_over_cores(_config(claude_code="brainbench/gbrain:latest"), jobs=4, cores=2)
    assert note == (
        "note: --jobs 4 with an image behind seam(s) claude-code (brainbench/gbrain:latest): each gets at most 2 hook "
        "call(s) at once (its container's CPUs, on 2 core(s)), so that a deadline an image keeps of its own does not "
        "depend on --jobs; the fixtures' other work still overlaps (docs/GBRAIN.md)")
    assert images_over_cores(_config(claude_code="brainbench/gbrain:latest"), jobs=2, cores=2) is None
    # Three seams in containers share two cores: one CPU, one call at a time each; --cpus sets it.
    shared = _config(claude_code="brainbench/gbrain:latest").model_copy(update={"executor": "docker"})
    assert "at most 1 hook call(s)" in (images_over_cores(shared, jobs=2, cores=2) or "")
    assert "at most 2 hook call(s)" in (images_over_cores(shared.model_copy(update={"cpus": 4.0}), jobs=4,
                                                          cores=2) or "")  # never more than the machine has


def test_jobs_within_the_cores_or_no_image_is_silent() -> None:
    assert images_over_cores(_config(claude_code="brainbench/gbrain:latest"), jobs=1, cores=2) is None
    assert images_over_cores(_config(), jobs=8, cores=2) is None
    # A seam override without an image (another command) is our machine's process, not an image.
    command = RunConfig(harnesses=["claude-code"], seams={"claude-code": SeamOverride(command=["true"])})
    assert images_over_cores(command, jobs=8, cores=2) is None
