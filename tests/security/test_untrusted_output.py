"""Output that cannot fail the run: ~6 KB of deeply nested JSON from one seam's hook.

Python's json and pydantic recurse per nesting level, so before every parse of a hook's,
stream program's, call server's or image label's bytes was bounded
(``models/bounded_json.py``), one such answer ended the whole run as "internal error … a
bug in BrainBench" and lost every seam's grades.  Now it is that seam's
``contract_violation`` (exec) or stream protocol violation (``adapter_crash``), and the
honest seams' cells and turn rows are byte-identical to a clean run: exec and stream,
local and Docker executors, and ``doctor`` alike.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hostile_kit import HOSTILE, bench, honest_view, hostile_faults, run_result
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]

HOOK = Path(__file__).parent / "hooks" / "nested_json_hook.py"
FIXTURES = ("kta-001-deal-recall", "ms-002-nondefault-active")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, reference: Path) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("nested-corpus"), FIXTURES)


@pytest.fixture(scope="module")
def clean(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return run_result(corpus, tmp_path_factory.mktemp("clean") / "result.json")[1]


def test_nested_json_from_an_exec_hook_is_its_contract_violation(corpus: tuple[Path, Path], clean: dict[str, Any],
                                                                tmp_path: Path) -> None:
    _, result = run_result(corpus, tmp_path / "result.json",
                           env={"BRAINBENCH_SEAM_COMMAND_CLAUDE_CODE": f"{sys.executable} {HOOK}"})
    assert hostile_faults(result) == {"contract_violation"}
    details = {f["detail"] for f in result["_meta"]["faults"]}
    assert details == {"stdout JSON nested deeper than 64 levels"}, details
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"


def test_nested_json_from_a_stream_program_is_that_seams_fault(corpus: tuple[Path, Path], clean: dict[str, Any],
                                                              tmp_path: Path) -> None:
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.{HOSTILE}]\ncommand = {json.dumps([sys.executable, str(HOOK), "--stream"])}\n'
                     'mode = "stream"\n')
    _, result = run_result(corpus, tmp_path / "result.json", "--seams", str(seams))
    # A nested stdout inside a good line is the hook's contract_violation; a nested line is a
    # stream protocol violation (the stream program's crash).
    assert hostile_faults(result) == {"contract_violation", "adapter_crash"}
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"


# --- Docker: the same hook as an image, in a run and in doctor ---------------------------

IMAGE_BASE = "brainbench/claude-code:latest"  # has python3; built offline by scripts/build-images
IMAGE = "bbtest-26p-nested-json:latest"


@pytest.fixture(scope="module")
def nested_image() -> str:
    from container_kit import CLIENT, REASON  # type: ignore[import-not-found]
    from image_build import build_image  # type: ignore[import-not-found]

    if CLIENT is None:
        pytest.skip(REASON)
    try:
        CLIENT.images.get(IMAGE_BASE)
    except Exception:
        pytest.skip(f"{IMAGE_BASE} is not built; run: scripts/build-images --offline")
    return build_image(CLIENT, IMAGE, {
        "Dockerfile": (f"FROM {IMAGE_BASE}\nCOPY hook.py /hostile/hook.py\n"
                       'LABEL io.brainbench.modes="exec,stream"\nUSER 65534:65534\n'
                       'ENTRYPOINT ["python3", "/hostile/hook.py"]\n'),
        "hook.py": HOOK.read_bytes()})


@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_nested_json_from_an_image_is_that_seams_fault(corpus: tuple[Path, Path], clean: dict[str, Any],
                                                       nested_image: str, mode: str, tmp_path: Path) -> None:
    seams = tmp_path / "seams.toml"
    argv = ["python3", "/hostile/hook.py", *(["--stream"] if mode == "stream" else [])]
    seams.write_text(f'[seams.{HOSTILE}]\nimage = "{nested_image}"\nmode = "{mode}"\n'
                     f"command = {json.dumps(argv)}\n")
    _, result = run_result(corpus, tmp_path / "result.json", "--seams", str(seams))
    expected = {"contract_violation"} if mode == "exec" else {"contract_violation", "adapter_crash"}
    assert hostile_faults(result) == expected
    assert honest_view(result) == honest_view(clean), "an honest seam's grade moved"


@pytest.mark.parametrize("mode", ["exec", "stream"])
def test_doctor_grades_nested_json_as_the_run_would(nested_image: str, mode: str) -> None:
    command = ["--command", "python3 /hostile/hook.py --stream"] if mode == "stream" else []
    proc = bench("doctor", "--image", nested_image, "--mode", mode, *command)
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "contract_violation" in proc.stdout, proc.stdout
    if mode == "exec":
        assert "nested deeper than 64 levels" in proc.stdout, proc.stdout
