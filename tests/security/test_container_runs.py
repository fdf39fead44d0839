"""Hostile images behind one seam of a real docker run cannot change the honest seams' grades.

Each case puts a hostile image behind codex (seams.toml) and runs a small reference
corpus: the snoop hook (hostile/snoop.py, as ``USER 0000``) looks for the other seams'
directories and transcripts, the gold, the fixtures and result files, tries to write
into its cwd and fills its /tmp (also from an image that carries the runner's own label
names and compose's, ``forged-labels``); the flood hook (hostile/flood.py) floods stdout on
every call, in exec and in stream mode.  Every attempt must fail, and the claude-code
and openclaw cells and rows must equal those of a clean run of the same corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from container_kit import CLIENT, build, needs_docker, repo_root
from reference_corpus import copy_reference_corpus

pytestmark = needs_docker
HOSTILE = Path(__file__).parent / "hostile"
IDS = ("kta-001-deal-recall", "cont-001-widget-pass-writer", "cont-001-widget-pass-reader", "ms-001-two-source-alias")
HONEST = ("claude-code", "openclaw")


def run_cli(out: Path, corpus: tuple[Path, Path], *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    fx, gd = corpus
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures", str(fx),
                           "--gold", str(gd), "--out", str(out), "--executor", "docker", *args],
                          capture_output=True, text=True, timeout=600, check=False, env=env, cwd=repo_root())
    assert out.exists(), proc.stderr[-3000:]
    return json.loads(out.read_text())


def honest(doc: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    cells = [c for c in doc["cells"] if c["harness"] in HONEST]
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"] if r["harness"] in HONEST]
    return cells, rows


@pytest.fixture(scope="module")
def corpus(reference: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return copy_reference_corpus(reference, tmp_path_factory.mktemp("corpus"), IDS)


@pytest.fixture(scope="module")
def clean(corpus: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    doc = run_cli(tmp_path_factory.mktemp("clean") / "clean.json", corpus)
    assert doc["_meta"]["faults"] == []
    return doc


# The runner's label names and compose's, on the image: a seam that would pass for a run's
# Postgres, a remote brain and a dead run's leftover (test_container_labels.py has the rest).
FORGED_LABELS = ('LABEL brainbench.role="brain" brainbench.managed="1" brainbench.run_id="bbtest-exec-victim" '
                 'com.docker.compose.service="postgres" com.docker.compose.project="brainbench"\n')


def image(name: str) -> str:
    if name == "snoop":
        return build("snoop-root", 'COPY snoop.py /snoop.py\nUSER 0000\nENTRYPOINT ["python3", "/snoop.py"]\n',
                     {"snoop.py": (HOSTILE / "snoop.py").read_bytes()})
    if name == "labels":
        return build("snoop-labels", FORGED_LABELS + 'COPY snoop.py /snoop.py\nUSER 10001:10001\n'
                     'ENTRYPOINT ["python3", "/snoop.py"]\n', {"snoop.py": (HOSTILE / "snoop.py").read_bytes()})
    return build("flood", 'COPY flood.py /flood.py\nUSER 10001:10001\nENTRYPOINT ["python3", "/flood.py"]\n',
                 {"flood.py": (HOSTILE / "flood.py").read_bytes()})


CASES = {
    # name: (image, seams.toml body after the image line, fault class every codex call must have or None)
    "snoop-exec": ("snoop", 'mode = "exec"\n', None),
    "forged-labels": ("labels", 'mode = "exec"\n', None),
    "flood-exec": ("flood", 'mode = "exec"\nenv = { FLOOD_KIND = "flood" }\n', "oversize"),
    "flood-stream": ("flood", 'mode = "stream"\ncommand = ["python3", "/flood.py", "--stream"]\n'
                              'env = { FLOOD_KIND = "flood" }\n', "oversize"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_seam_changes_no_honest_grade(case: str, corpus: tuple[Path, Path], clean: dict[str, Any],
                                                tmp_path: Path) -> None:
    name, body, fault = CASES[case]
    ref = image(name)
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.codex]\nimage = "{ref}"\n{body}')
    hostile = run_cli(tmp_path / "hostile.json", corpus, "--seams", str(seams))
    codex_faults = [f for f in hostile["_meta"]["faults"] if f["harness"] == "codex"]
    assert not [f for f in codex_faults if "LEAK" in f["detail"]], codex_faults
    if fault is None:
        assert codex_faults == []  # every call ran and found nothing
    else:
        assert codex_faults and {f["fault_class"] for f in codex_faults} == {fault}, codex_faults
    assert [f for f in hostile["_meta"]["faults"] if f["harness"] != "codex"] == []
    assert honest(hostile) == honest(clean)
    codex = [s for s in hostile["_meta"]["run"]["seams"] if s["harness"] == "codex"]
    assert codex[0]["seam"] == "production" and codex[0]["image"] == ref
    left = {"label": f"brainbench.run_id={hostile['_meta']['run']['run_id']}"}
    assert CLIENT.containers.list(all=True, filters=left) == [] and CLIENT.networks.list(filters=left) == []
