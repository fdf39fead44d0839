"""The files a call names, carried to a hook that cannot see the runner's filesystem.

A hook reads its prior context from ``transcript_path`` (a Claude Code transcript, a
Codex rollout) and runs in ``cwd``.  Where the seam shares the runner's filesystem (local
processes, a local Docker engine's bind mount) nothing travels.  Where it does not (a
remote Docker engine, a pod's sidecar), every call carries the current bytes of the
transcript it names (and the directories it names), and the call server writes them at
the same absolute path before the hook starts: the hook sees a real file where the
harness would have put it.  Only paths inside the seam's own subtree are ever copied, so
a crafted payload cannot pull other files of the run (another seam's transcripts, the
gold) to a seam.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from brainbench.models import bounded_json

# Copy each file whole: transcripts are rewritten per turn and small; a cap keeps a
# runaway file from turning into a multi-megabyte request line.
MAX_FILE_BYTES = 8 * 1024 * 1024


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
    """What the hook of this payload will look for on disk, read from the runner's side now."""
    out = CallFiles()
    try:
        message = bounded_json.loads(payload)
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
