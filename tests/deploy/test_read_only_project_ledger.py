"""The ledger never defaults onto a project it cannot write (a corpus baked into a read-only image).

The default ledger is PROJECT/.brainbench/brainbench-ledger.jsonl; in the shard pod the project
is the working directory, /corpus, on a read-only root, and appending there ended every shard
run in "internal error".  Here the project's .brainbench is a plain file, so the directory cannot
be made (as a read-only mount refuses it; root ignores mode bits, so those prove nothing here):
the run ends as it graded, its line goes to TMPDIR's brainbench-ledgers/, and one stderr line
says where.  An explicit --ledger that cannot be written is one line too, never a traceback.
The real read-only root is tests/docker/test_kubernetes_pods.py's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from reference_corpus import copy_reference_corpus  # type: ignore[import-not-found]


def _run(project: Path, corpus: tuple[Path, Path], *extra: str) -> subprocess.CompletedProcess[str]:
    # TMPDIR must stay reachable for the embedded server's own user (it may put its cluster there).
    return subprocess.run(
        [sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(corpus[0]), "--gold", str(corpus[1]),
         "--fixture", "kta-001-deal-recall", "--harness", "claude-code", "--quiet", "--jobs", "1",
         "--out", str(project.parent / "out" / "result.json"), *extra],
        cwd=project, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "TMPDIR": str(_scratch(project)), "COLUMNS": "250"})


def _scratch(project: Path) -> Path:
    return Path((project.parent / "scratch").read_text())


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    root = tmp_path / "corpus"
    root.mkdir()
    (root / ".brainbench").write_text("not a directory\n")  # nothing can be made under it
    scratch = Path(tempfile.mkdtemp(prefix="bbtest-26p-scratch-"))
    scratch.chmod(0o755)
    (tmp_path / "scratch").write_text(str(scratch))
    (tmp_path / "out").mkdir()
    try:
        yield root
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_an_unwritable_project_sends_the_ledger_line_to_tmpdir(project: Path, reference: Path) -> None:
    corpus = copy_reference_corpus(reference, project.parent / "c", ("kta-001-deal-recall",))
    proc = _run(project, corpus)
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    ledgers = list((_scratch(project) / "brainbench-ledgers").glob("ledger-*.jsonl"))
    assert len(ledgers) == 1, proc.stderr
    line = json.loads(ledgers[0].read_text().splitlines()[-1])
    assert line["exit_code"] == 0 and line["complete"] is True
    said = [s for s in proc.stderr.splitlines() if "ledger" in s]
    assert len(said) == 1 and "not writable" in said[0] and str(ledgers[0]) in said[0], proc.stderr


def test_an_explicit_ledger_that_cannot_be_written_is_one_line(project: Path, reference: Path) -> None:
    corpus = copy_reference_corpus(reference, project.parent / "c", ("kta-001-deal-recall",))
    proc = _run(project, corpus, "--ledger", str(project / ".brainbench" / "ledger.jsonl"))
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == 0, proc.stderr
    said = [s for s in proc.stderr.splitlines() if "ledger" in s]
    assert len(said) == 1 and "could not append to the ledger" in said[0], proc.stderr
