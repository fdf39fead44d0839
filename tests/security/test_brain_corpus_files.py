"""Corpus files are data, not devices: ``validate`` and ``run`` never hang or read outside the corpus.

A symlink to /dev/zero, a FIFO, a symlink into the gold directory and an oversized file
each get one problem line naming the file; nothing blocks (the whole command runs under a
timeout) and no memory balloons (the read is capped).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from brainbench.corpus.loader import MAX_FILE_BYTES
from reference_corpus import copy_reference_corpus


def test_devices_pipes_foreign_symlinks_and_huge_files_are_refused_by_name(reference: Path,
                                                                          tmp_path: Path) -> None:
    fixtures, gold = copy_reference_corpus(reference, tmp_path, ("kta-001-deal-recall",))
    (fixtures / "zero.fixture.json").symlink_to("/dev/zero")
    os.mkfifo(fixtures / "fifo.fixture.json")
    (fixtures / "tofifo.fixture.json").symlink_to("fifo.fixture.json")
    (fixtures / "leak.fixture.json").symlink_to(gold / "kta-001-deal-recall.gold.json")
    with (fixtures / "huge.fixture.json").open("wb") as fh:  # sparse: costs no disk
        fh.truncate(MAX_FILE_BYTES + 1)
    (fixtures / "inside.fixture.json").symlink_to("kta-001-deal-recall.fixture.json")  # stays inside: allowed
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "validate", "--fixtures", str(fixtures),
                           "--gold", str(gold)], capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-2000:]
    lines = [line.strip() for line in proc.stderr.splitlines() if line.startswith("  ")]
    by_file = {name: [line for line in lines if f"{name}.fixture.json: $:" in line]
               for name in ("zero", "fifo", "tofifo", "leak", "huge")}
    assert "symlink to /dev/zero leaves the corpus directory" in by_file["zero"][0]
    assert "not a regular file" in by_file["fifo"][0]
    assert "not a regular file" in by_file["tofifo"][0]
    assert "leaves the corpus directory" in by_file["leak"][0]
    assert f"the limit is {MAX_FILE_BYTES}" in by_file["huge"][0]
    assert not [line for line in lines if "inside.fixture.json: $:" in line]
