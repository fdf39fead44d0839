"""Scratch directories that say who owns them, so a sweep removes only those of dead runs.

``brainbench-run-*`` (transcripts) and ``brainbench-pg-*`` (an embedded cluster) are
created by :func:`owned_scratch_dir`, which writes the owner's label into the directory
before anything else goes in.  A directory without a readable label is never swept
automatically: it may be one being created right now.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterable
from pathlib import Path

from brainbench.models.owner import Owner
from brainbench.ownership import current_owner, is_dead
from brainbench.scratch import scratch_candidates, scratch_parent

OWNER_FILE = ".brainbench-owner"
RUN_PREFIX = "brainbench-run-"


def owned_scratch_dir(prefix: str, parent: Path | None = None) -> Path:
    base = parent or scratch_parent()
    # BRAINBENCH_SCRATCH_DIR (or TMPDIR) may name a directory that does not exist yet.
    base.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=prefix, dir=base))
    (root / OWNER_FILE).write_text(current_owner().label())
    return root


def scratch_owner(root: Path) -> Owner | None:
    try:
        return Owner.from_label((root / OWNER_FILE).read_text())
    except OSError:
        return None


def scratch_dirs(prefix: str, bases: Iterable[Path] | None = None) -> list[Path]:
    found = [r for base in (bases or scratch_candidates()) for r in base.glob(prefix + "*") if r.is_dir()]
    return list(dict.fromkeys(found))


def dead_scratch_dirs(prefix: str, bases: Iterable[Path] | None = None) -> list[Path]:
    return [root for root in scratch_dirs(prefix, bases) if is_dead(scratch_owner(root))]


def sweep_run_dirs(bases: Iterable[Path] | None = None, *, include_live: bool = False) -> list[Path]:
    """Remove the transcript dirs of dead runs (or, with ``include_live``, every one)."""
    doomed = scratch_dirs(RUN_PREFIX, bases) if include_live else dead_scratch_dirs(RUN_PREFIX, bases)
    for root in doomed:
        shutil.rmtree(root, ignore_errors=True)
    return [root for root in doomed if not root.exists()]
