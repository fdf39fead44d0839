"""What ``brainbench --version`` prints: package version, source revision, contract version.

The revision comes from the checkout when the package runs from one (editable
installs, CI), else from ``_revision.py``, which ``scripts/build-dist`` and the
orchestrator image write at build time so an installed wheel still knows its commit.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from brainbench import CONTRACT_VERSION, __version__

PACKAGE_DIR = Path(__file__).resolve().parent


@functools.cache
def source_revision() -> str:
    if (PACKAGE_DIR.parents[1] / ".git").exists():
        try:
            out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, timeout=5,
                                 check=False, cwd=PACKAGE_DIR)
        except (OSError, subprocess.TimeoutExpired):
            out = None
        if out is not None and out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    try:
        from brainbench._revision import REVISION  # type: ignore[import-not-found]
    except ImportError:
        return "unknown"
    return str(REVISION)


def version_line() -> str:
    return f"brainbench {__version__} (revision {source_revision()}, hook contract v{CONTRACT_VERSION})"
