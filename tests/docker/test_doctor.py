"""``brainbench doctor`` through the real CLI: it predicts the run, and every message says what to do."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from image_build import build_image  # type: ignore[import-not-found]
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

REPO = Path(__file__).resolve().parents[2]
EXAMPLE_IMAGE = "brainbench/example-shell-recall:latest"
SHELL_BASES = ("brainbench/example-base:bookworm", "brainbench/base:bookworm")


def _bench(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *args], capture_output=True, text=True,
                          timeout=timeout, check=False, env={**os.environ, "COLUMNS": "250", **(env or {})})


def _build(client: Any, tag: str, dockerfile: str, files: dict[str, bytes] | None = None) -> str:
    return build_image(client, tag, {"Dockerfile": dockerfile, **(files or {})})


def _shell_base(client: Any) -> str:
    from docker.errors import ImageNotFound

    for ref in SHELL_BASES:
        try:
            client.images.get(ref)
            return ref
        except ImageNotFound:
            continue
    pytest.skip("no local Debian base; run: scripts/build-images --offline")


def _script_image(client: Any, tag: str, script: str, labels: str = "") -> str:
    return _build(client, tag, f"FROM {_shell_base(client)}\nCOPY hook /usr/local/bin/hook\n{labels}\n"
                  "USER 65534:65534\nENTRYPOINT [\"/usr/local/bin/hook\"]\n",
                  {"hook": ("#!/bin/sh\n" + script).encode()})


@pytest.fixture(scope="module")
def example_image(docker_client: Any) -> str:
    from docker.errors import ImageNotFound

    try:
        docker_client.images.get(EXAMPLE_IMAGE)
    except ImageNotFound:
        pytest.skip(f"{EXAMPLE_IMAGE} not built; run: scripts/build-images --offline")
    return EXAMPLE_IMAGE


def test_a_hook_that_ignores_the_brain_fails_the_happy_path(docker_client: Any) -> None:
    # Exit 0 with a fixed context: fine on the wire, but it never reads the brain.
    image = _script_image(docker_client, "bbtest-dropin-fixed:1",
                          "cat >/dev/null\necho 'fixed hook: not reading any brain' >&2\n"
                          "printf '%s' '{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\","
                          "\"additionalContext\":\"always the same\"}}'\n")
    proc = _bench("doctor", "--image", image)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "expected `companies/acme-example`" in proc.stdout
    assert "hook stderr (happy path (exec)):" in proc.stdout
    assert "fixed hook: not reading any brain" in proc.stdout
    # No contract-version label: a warning with the line to add, not a failure.
    assert 'LABEL io.brainbench.contract-version="1"' in proc.stdout


def test_doctor_grades_with_the_run_rules(docker_client: Any) -> None:
    """`decision: block` is `blocked` in a run, so it is a failure here too (one set of rules)."""
    image = _script_image(docker_client, "bbtest-dropin-blocker:1",
                          "cat >/dev/null\necho 'policy says no' >&2\n"
                          "printf '%s' '{\"decision\":\"block\",\"reason\":\"nope\"}'\n",
                          'LABEL io.brainbench.contract-version="2"')
    proc = _bench("doctor", "--image", image)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the run would grade this `blocked`" in proc.stdout
    assert "policy says no" in proc.stdout
    assert "io.brainbench.contract-version='2', but this BrainBench speaks contract 1" in proc.stdout


def test_a_hook_that_failed_is_not_passed_as_silence(example_image: str, docker_client: Any) -> None:
    """The worked example with its prompt clip taken out: psql gets the whole prompt as one argument,
    which fails over Linux's 128 KiB limit; fail-open, the hook exits 0 in silence.  That is a
    failure (stderr says so), where the example itself (clipped) answers the 1 MiB prompt."""
    hook = (REPO / "harness_images" / "examples" / "shell-recall" / "hook.sh").read_text()
    assert "\nMAX_PROMPT=8192\n" in hook
    unclipped = _build(docker_client, "bbtest-dropin-argv:1",
                       f"FROM {example_image}\nCOPY hook /usr/local/bin/shell-recall\n",
                       {"hook": hook.replace("\nMAX_PROMPT=8192\n", "\nMAX_PROMPT=100000000\n").encode()})
    proc = _bench("doctor", "--image", unclipped)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if "oversize prompt (1 MiB) (exec)" in x)
    assert "FAIL" in line and "it failed rather than found nothing" in line, proc.stdout
    flat = " ".join(proc.stdout.split())
    assert "read it from stdin" in flat.replace("│ ", "")
    assert "Argument list too long" in proc.stdout  # the hook's own stderr, shown under the check
    clipped = _bench("doctor", "--image", example_image)
    assert clipped.returncode == 0, clipped.stdout + clipped.stderr
    line = next(x for x in clipped.stdout.splitlines() if "oversize prompt (1 MiB) (exec)" in x)
    assert "PASS" in line and "context" in line, clipped.stdout


def test_stream_without_an_answer_fails_fast_with_what_to_do(example_image: str) -> None:
    started = time.monotonic()
    proc = _bench("doctor", "--image", example_image, "--mode", "stream", "--timeout", "3")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    # The executor's warm-up handshake finds it before any check runs (one line, the same as a run's).
    assert "no answer to the stream handshake in 3 s: this image speaks exec only; use mode=exec" in proc.stdout
    assert time.monotonic() - started < 60  # one timeout, not one per check


def test_missing_image_names_pull_and_build(docker_client: Any) -> None:
    proc = _bench("doctor", "--image", "bbtest-dropin-absent:1")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "`docker pull bbtest-dropin-absent:1` if it is published" in proc.stderr
    assert "`docker build -t bbtest-dropin-absent:1 DIR`" in proc.stderr
    assert "brainbench images build" not in proc.stderr  # only our own images are built by us
    ours = _bench("doctor", "--image", "brainbench/not-an-image-of-ours:never")
    assert ours.returncode == 2 and "scripts/build-images --offline" in ours.stderr


def test_image_without_entrypoint_or_shell_is_a_clear_failure(docker_client: Any, reference: Path,
                                                               tmp_path: Path) -> None:
    files = {"hook": b"not a program\n"}
    no_cmd = _build(docker_client, "bbtest-dropin-nocmd:1", "FROM scratch\nCOPY hook /hook\n", files)
    proc = _bench("doctor", "--image", no_cmd)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "the image has no ENTRYPOINT or CMD" in proc.stdout

    no_shell = _build(docker_client, "bbtest-dropin-noshell:1",
                      "FROM scratch\nCOPY hook /hook\nENTRYPOINT [\"/hook\"]\n", files)
    started = time.monotonic()
    proc = _bench("doctor", "--image", no_shell)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"image {no_shell} has no /bin/sh: the image contract needs /bin/sh and `timeout`" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    # ... and a run stops at once with the same sentence: no 30 s of retries, exit 2.
    fx, gd = copy_reference_corpus(reference, tmp_path, ("kta-001-deal-recall",))
    run = _bench("run", "--fixtures", str(fx), "--gold", str(gd), "--executor", "docker", "--harness",
                 "claude-code", "--image", f"claude-code={no_shell}", "--mode", "exec", "--quiet",
                 env={"CI": ""})
    assert run.returncode == 2, run.stderr
    assert f"run failed: image {no_shell} has no /bin/sh" in run.stderr
    assert time.monotonic() - started < 90
    run = _bench("run", "--fixtures", str(fx), "--gold", str(gd), "--executor", "docker", "--harness",
                 "claude-code", "--image", f"claude-code={no_cmd}", "--mode", "exec", "--quiet", env={"CI": ""})
    assert run.returncode == 2, run.stderr
    assert f"run failed: image {no_cmd} has no ENTRYPOINT or CMD, so it has no hook to run" in run.stderr
