"""Where a run's throwaway files live: the embedded cluster and the seams' transcripts.

A RAM-backed filesystem is used when it has room: on this machine's disk, writing
a fresh cluster alone costs ≈ 1 s of kernel time, every CREATE DATABASE copies
files again, and the seams append to transcripts on every turn.  Containers
often give /dev/shm only 64 MB, hence the free-space floor.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

RAM_DIR = Path("/dev/shm")
RAM_MIN_FREE = 1 << 30


def scratch_parent(ram_needed: int = 0) -> Path:
    """``BRAINBENCH_SCRATCH_DIR``, else an explicitly set ``TMPDIR``, else /dev/shm with ≥ 1 GiB free
    beyond ``ram_needed``, else the temp dir.

    ``ram_needed`` is what the brain may grow by when every seam takes its whole share at once
    (``BrainShare.worst_case_bytes``): /dev/shm is memory, and a full brain must never cost the
    machine's; on disk the same bounds only cost disk.

    An explicit TMPDIR wins over /dev/shm because it may be load-bearing: under compose
    the runner's TMPDIR is a host dir mounted at the same path, so that sibling seam
    containers see the transcripts at the paths the runner hands them.
    """
    explicit = os.environ.get("BRAINBENCH_SCRATCH_DIR") or os.environ.get("TMPDIR")
    if explicit:
        return Path(explicit)
    try:
        if os.access(RAM_DIR, os.W_OK | os.X_OK):
            stats = os.statvfs(RAM_DIR)
            if stats.f_bavail * stats.f_frsize >= RAM_MIN_FREE + ram_needed:
                return RAM_DIR
    except OSError:
        pass
    return Path(tempfile.gettempdir())


def scratch_candidates() -> list[Path]:
    """Every place an earlier run may have left scratch behind (for sweeps of dead runs)."""
    return list(dict.fromkeys([scratch_parent(), RAM_DIR, Path(tempfile.gettempdir())]))
