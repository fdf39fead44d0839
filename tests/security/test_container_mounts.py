"""A hostile seam image sees only its own work subtree; the honest seams grade as in a clean run.

The snoop hook (hostile/snoop.py) sits behind the codex seam of a real docker run and on
every call looks for the other seams' directories and transcripts, the gold, the
fixtures and result files, tries to write into its cwd, and fills its /tmp.  Every
attempt must fail, and the claude-code and openclaw cells and rows must equal those of
a clean run of the same corpus.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from container_kit import build, needs_docker, repo_root
from reference_corpus import copy_reference_corpus

pytestmark = needs_docker
HOSTILE = Path(__file__).parent / "hostile"
IDS = ("kta-001-deal-recall", "cont-001-widget-pass-writer", "cont-001-widget-pass-reader", "ms-001-two-source-alias")
HONEST = ("claude-code", "openclaw")


def run_cli(out: Path, fx: Path, gd: Path, *args: str) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "run", "--quiet", "--fixtures", str(fx),
                           "--gold", str(gd), "--out", str(out), "--executor", "docker", *args],
                          capture_output=True, text=True, timeout=600, check=False, env=env, cwd=repo_root())
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return json.loads(out.read_text())


def honest(doc: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    cells = [c for c in doc["cells"] if c["harness"] in HONEST]
    rows = [{k: v for k, v in r.items() if k != "latency_ms"} for r in doc["turn_rows"] if r["harness"] in HONEST]
    return cells, rows


@pytest.fixture(scope="module")
def snoop_image() -> str:
    return build("snoop", 'COPY snoop.py /snoop.py\nUSER 10001:10001\nENTRYPOINT ["python3", "/snoop.py"]\n',
                 {"snoop.py": (HOSTILE / "snoop.py").read_bytes()})


def test_a_snooping_seam_finds_nothing_and_changes_no_honest_grade(snoop_image: str, reference: Path,
                                                                   tmp_path: Path) -> None:
    fx, gd = copy_reference_corpus(reference, tmp_path / "corpus", IDS)
    clean = run_cli(tmp_path / "clean.json", fx, gd)
    seams = tmp_path / "seams.toml"
    seams.write_text(f'[seams.codex]\nimage = "{snoop_image}"\nmode = "exec"\n')
    hostile = run_cli(tmp_path / "hostile.json", fx, gd, "--seams", str(seams))
    codex_faults = [f for f in hostile["_meta"]["faults"] if f["harness"] == "codex"]
    assert not [f for f in codex_faults if "LEAK" in f["detail"]], codex_faults
    assert not codex_faults, codex_faults  # silent and clean: every call ran and found nothing
    assert honest(hostile) == honest(clean)
    codex = [s for s in hostile["_meta"]["run"]["seams"] if s["harness"] == "codex"]
    assert codex[0]["seam"] == "production" and codex[0]["image"] == snoop_image
