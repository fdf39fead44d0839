"""``--jobs`` above the cores with an image behind a seam: the run warns, once, before it starts.

Measured on gbrain's image (docs/CHANGELOG.md, 2026-12-03): at ``--jobs`` 1 and 2 on 2 cores every turn
row was the same; at 4, 12 rows differed (its hook gave up at its own 800 ms deadline; three calls met
the run's 30 s).  Our own adapters keep no deadline of their own, so a run of them never warns.
"""

from __future__ import annotations

from brainbench.models.config import RunConfig, SeamOverride
from brainbench.orchestrator.launch import images_over_cores


def _config(**seams: str) -> RunConfig:
    return RunConfig(harnesses=["openclaw", "claude-code", "codex"],
                     seams={h.replace("_", "-"): SeamOverride(image=i) for h, i in seams.items()})


def test_more_jobs_than_cores_with_an_image_warns_and_names_the_seam_and_image() -> None:
    warning = images_over_cores(_config(claude_code="brainbench/gbrain:latest"), jobs=4, cores=2)
    assert warning == (
        "warning: --jobs 4 on 2 core(s) with an image behind seam(s) claude-code (brainbench/gbrain:latest): a hook "
        "that keeps a deadline of its own may answer late or not at all under that load, and is graded as it "
        "answered; compare a run at --jobs 2 or fewer (docs/GBRAIN.md)")


def test_jobs_within_the_cores_or_no_image_is_silent() -> None:
    assert images_over_cores(_config(claude_code="brainbench/gbrain:latest"), jobs=2, cores=2) is None
    assert images_over_cores(_config(), jobs=8, cores=2) is None
    # A seam override without an image (another command) is our machine's process, not an image.
    command = RunConfig(harnesses=["claude-code"], seams={"claude-code": SeamOverride(command=["true"])})
    assert images_over_cores(command, jobs=8, cores=2) is None
