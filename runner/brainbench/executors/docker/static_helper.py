"""The call server as one static binary, for images without Python (``executors/call_server.c``).

Built once per source on the runner's host with its C compiler (``cc -static``; glibc's
or musl's static libc) into the user's cache, and bind-mounted read-only into every seam
container at :data:`TARGET` (a hook can neither replace it nor run anything it writes:
``/tmp`` is noexec).  The container needs only ``/bin/sh``.  Where the host has no
compiler or no static libc, or the engine runs another architecture, there is no binary
and images without Python fall back to ``docker exec`` per call (docs/EXECUTORS.md).
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path

from brainbench.brain.cluster_cache import cache_root

log = logging.getLogger(__name__)

SOURCE = Path(__file__).resolve().parents[1] / "call_server.c"
TARGET = "/.brainbench-call-server"
# Docker's names for the architectures platform.machine() reports differently.
_ARCH_ALIASES = {"amd64": "x86_64", "arm64": "aarch64"}


def same_architecture(engine_arch: str | None) -> bool:
    """Whether a binary built here runs on the engine (``docker info``'s Architecture)."""
    if not engine_arch:
        return False
    here = platform.machine().lower()
    there = engine_arch.lower()
    return _ARCH_ALIASES.get(here, here) == _ARCH_ALIASES.get(there, there)


@functools.lru_cache(maxsize=1)
def helper_binary() -> str | None:
    """The path of the static call server for this host, or None (and why, logged once)."""
    try:
        source = SOURCE.read_bytes()
    except OSError as exc:
        log.info("docker: no static call server: %s", exc)
        return None
    digest = hashlib.sha256(source + platform.machine().encode()).hexdigest()[:16]
    target = cache_root() / f"call-server-{digest}"
    if target.is_file():
        return str(target)
    compiler = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        log.info("docker: no C compiler on this host: images without python3 use docker exec per call")
        return None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent) as scratch:
            built = Path(scratch) / "call-server"
            proc = subprocess.run([compiler, "-static", "-O2", "-pthread", "-o", str(built), str(SOURCE)],
                                  capture_output=True, text=True, timeout=120, check=False)
            if proc.returncode != 0:
                log.info("docker: cannot build the static call server (%s); images without python3 use "
                         "docker exec per call", (proc.stderr.strip().splitlines() or ["no output"])[-1])
                return None
            built.chmod(0o755)  # the hook's uid runs it, whatever the runner's
            os.replace(built, target)  # atomic: concurrent runners build the same bytes
    except (OSError, subprocess.SubprocessError) as exc:
        log.info("docker: cannot build the static call server: %s", exc)
        return None
    return str(target)
