"""The files a call names, copied into a remote seam container with the call.

A hook reads its prior context from ``transcript_path`` (a Claude Code transcript, a
Codex rollout) and runs in ``cwd``.  On a local engine the seam's work subtree is
bind-mounted; a remote engine cannot see it, so every call carries the current bytes of
the transcript it names (and the directories it names) to the container, which writes
them at the same absolute path on a tmpfs before the hook starts: the hook sees a real
file where the harness would have put it.  Only paths inside the seam's own subtree are
ever copied, so a crafted payload cannot pull other files of the run into a container.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .container import SeamContainer

# Copy each file whole: transcripts are rewritten per turn and small; a cap keeps a
# runaway file from turning into a multi-megabyte request line.
MAX_FILE_BYTES = 8 * 1024 * 1024

# Fallback writer for images without Python (no call server): one exec per file.
WRITE_FILE = 'mkdir -p -- "$1" && cat > "$0.bb-tmp" && mv -f -- "$0.bb-tmp" "$0"'


@dataclass
class CallFiles:
    dirs: list[str] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.dirs or self.files)

    def as_request(self) -> dict[str, object]:
        """The call server's ``files``/``dirs`` fields (bytes as surrogate-escaped text)."""
        return {"dirs": self.dirs,
                "files": {path: data.decode("utf-8", "surrogateescape") for path, data in self.files.items()}}


def _inside(path: str, roots: Sequence[str]) -> bool:
    real = os.path.realpath(path)
    return any(real == root or real.startswith(root.rstrip("/") + "/") for root in roots)


def files_for(payload: bytes, roots: Sequence[str]) -> CallFiles:
    """What the hook of this payload will look for on disk, read from the host now."""
    out = CallFiles()
    try:
        message = json.loads(payload)
    except (ValueError, UnicodeDecodeError):
        return out
    if not isinstance(message, dict):
        return out
    real_roots = [os.path.realpath(r) for r in roots]
    cwd = message.get("cwd")
    if isinstance(cwd, str) and os.path.isabs(cwd) and _inside(cwd, real_roots):
        out.dirs.append(cwd)
    path = message.get("transcript_path")
    if isinstance(path, str) and os.path.isabs(path) and _inside(path, real_roots) and os.path.isfile(path):
        with open(path, "rb") as handle:
            out.files[path] = handle.read(MAX_FILE_BYTES)
    return out


def write_by_exec(seam: SeamContainer, files: CallFiles) -> None:
    """Copy ``files`` in with one ``docker exec`` each (images that cannot run the call server)."""
    from .attach import HijackedExec

    api = seam.executor.api
    for directory in files.dirs:
        exec_id = seam.create_exec(["mkdir", "-p", "--", directory], {})
        api.api.exec_start(exec_id)
    for path, data in files.files.items():
        exec_id = seam.create_exec(["/bin/sh", "-c", WRITE_FILE, path, os.path.dirname(path)], {})
        handle = HijackedExec.start(api.host, api.api_version, exec_id)
        try:
            if data:
                handle.send(data)
            handle.close_write()
            handle.read_all(None)
        finally:
            handle.close()
        code = seam.exit_code(exec_id)
        if code != 0:
            from .failures import DockerInfraError

            raise DockerInfraError(f"could not copy {path} into the {seam.seam} container (exit {code})")
