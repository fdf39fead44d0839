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

import os
from typing import TYPE_CHECKING

# The rule of what travels is the executors' (sidecars use it too): re-exported here.
from ..call_files import MAX_FILE_BYTES, CallFiles, files_for

if TYPE_CHECKING:
    from .container import SeamContainer

__all__ = ["MAX_FILE_BYTES", "WRITE_FILE", "CallFiles", "files_for", "write_by_exec"]

# Fallback writer for images without Python (no call server): one exec per file.
WRITE_FILE = 'mkdir -p -- "$1" && cat > "$0.bb-tmp" && mv -f -- "$0.bb-tmp" "$0"'


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
