"""What a seam container may see of the host: its own work subtree and the brain's socket.

(On a remote engine nothing is mounted: ``remote_tmpfs`` stands in for the subtree.)

The seam's subtree (``workroot/<harness>``: its transcripts, rollouts and cwd) is
bind-mounted read-only at the same absolute path, since harness messages carry
absolute paths.  Nothing else of the run is mounted (only our static call server, as one
read-only file): not the other seams' subtrees, the gold, the fixtures or the result files.
On the host the subtree is closed to everyone but the runner and the hook's own group.
"""

from __future__ import annotations

import contextlib
import os
import stat
from typing import Any


def hook_group(user: str) -> int:
    """The gid of a resolved numeric ``uid:gid``."""
    return int(user.partition(":")[2] or user)


def share_with_hook(path: str, gid: int) -> list[str]:
    """Make ``path`` readable by the hook's group and nobody else; returns ``group_add`` ids.

    As root the subtree is handed to the hook's gid (setgid, so the files the runner
    writes later inherit it).  Otherwise the runner's own group is lent to the container
    instead, which is only safe while that group is not root's.
    """
    try:
        st = os.stat(path)
    except OSError:
        return []
    if os.getuid() == 0:
        with contextlib.suppress(OSError):
            os.chown(path, 0, gid)
            os.chmod(path, 0o2750)
        for root, dirs, files in os.walk(path):
            for name in dirs + files:
                with contextlib.suppress(OSError):
                    os.lchown(os.path.join(root, name), -1, gid)
        return []
    os.chmod(path, stat.S_IMODE(st.st_mode) & ~0o007 | 0o2750)
    runner_gid = os.getgid()
    if runner_gid != 0:
        return [str(runner_gid)]
    # No safe group to share: fall back to world access (documented in docs/CONTAINERS.md).
    os.chmod(path, 0o2755)
    return []


def grant_socket_access(path: str) -> None:
    """Let the container's non-root user reach a bind-mounted socket directory.

    Connecting to a socket needs search (o+x) on its directory, nothing more: the
    directory stays unlistable and unwritable (the embedded server's own setting).
    """
    try:
        st = os.stat(path)
    except OSError:
        return
    if stat.S_ISDIR(st.st_mode) and (st.st_uid == os.getuid() or os.getuid() == 0):
        want = stat.S_IXOTH
        if st.st_mode & want != want:
            with contextlib.suppress(OSError):
                os.chmod(path, stat.S_IMODE(st.st_mode) | want)


def seam_mounts(shared_paths: list[str], socket_dir: str | None, user: str,
                call_server: str | None = None) -> tuple[list[Any], list[str]]:
    """Docker mounts for one seam container and the extra groups its hook needs
    (``call_server``: the static call server's host path, mounted read-only)."""
    from docker.types import Mount

    mounts: list[Any] = []
    groups: list[str] = []
    gid = hook_group(user)
    for path in dict.fromkeys(shared_paths):
        if os.path.exists(path):
            groups += share_with_hook(path, gid)
            mounts.append(Mount(target=path, source=path, type="bind", read_only=True))
    if socket_dir and os.path.exists(socket_dir) and socket_dir not in shared_paths:
        grant_socket_access(socket_dir)
        mounts.append(Mount(target=socket_dir, source=socket_dir, type="bind", read_only=True))
    if call_server:
        from .static_helper import TARGET

        mounts.append(Mount(target=TARGET, source=call_server, type="bind", read_only=True))
    return mounts, sorted(set(groups))


def remote_tmpfs(shared_paths: tuple[str, ...] | list[str], user: str) -> dict[str, str]:
    """tmpfs mounts standing in for the work subtree on a remote engine (same absolute paths).

    Owned by the hook's uid:gid and closed to others: the in-container call server (which
    runs as the hook user) writes the transcripts there.
    """
    uid, _, gid = user.partition(":")
    gid = gid or uid
    return {path: f"rw,nosuid,nodev,size=64m,uid={uid},gid={gid},mode=0700" for path in dict.fromkeys(shared_paths)}
