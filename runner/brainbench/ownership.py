"""This process's owner identity, and whether the owner of a leftover is provably dead.

Every object a run leaves in the world (container, network, database, role, scratch
directory) records :func:`current_owner`; sweeps remove an object only when
:func:`owner_state` says ``dead``.  ``unknown`` (another machine, a lock file we cannot
see) is never swept automatically: removing a live run's brain would corrupt its grades.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import functools
import os
import secrets
import threading
import time
from pathlib import Path

from brainbench.models.owner import Owner, OwnerState
from brainbench.scratch import scratch_parent

LOCK_PREFIX = "brainbench-owner-"


def _boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def _pid_ns() -> str:
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return "unknown"


def procfs_is_ours() -> bool:
    """Whether /proc numbers processes as this pid namespace does.

    Not under ``unshare --pid`` without a fresh /proc mount (nor in a container given the host's
    /proc): there /proc/PID is another namespace's process PID, so a pid read here names nothing.
    """
    try:
        return os.readlink("/proc/self") == str(os.getpid())
    except OSError:
        return False


def start_ticks(pid: int | str) -> int | None:
    """Field 22 of /proc/PID/stat: the process start time in clock ticks since boot."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses; fields after it do not.
    fields = raw[raw.rindex(")") + 2:].split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def _hold_lock(directory: Path) -> str | None:
    """Create and hold an flock for the life of this process; None where the dir is not writable.

    The name is new (``O_EXCL``, a random part): a pid alone is not unique in a shared scratch
    dir (every container's or ``unshare``'s runner is pid 1 of its own namespace), and a lock
    file that another process had created, released or deleted could prove a live owner dead.
    """
    try:
        directory.mkdir(parents=True, exist_ok=True)
        path = directory / f"{LOCK_PREFIX}{_boot_id()[:8]}-{os.getpid()}-{secrets.token_hex(4)}.lock"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            path.unlink()
        return None

    def release() -> None:
        with contextlib.suppress(OSError):
            path.unlink()
        with contextlib.suppress(OSError):
            os.close(fd)

    atexit.register(release)
    return str(path)


_OWNER_LOCK = threading.Lock()


@functools.cache
def _owner() -> Owner:
    # /proc/self is this process whatever namespace /proc belongs to; /proc/<getpid()> may not be.
    return Owner(boot_id=_boot_id(), pid_ns=_pid_ns(), pid=os.getpid(), start_ticks=start_ticks("self") or 0,
                 lock_path=_hold_lock(scratch_parent()))


def current_owner() -> Owner:
    """This process's identity; the first call takes its lock file (once, whichever thread asks)."""
    with _OWNER_LOCK:  # functools.cache alone lets two threads each compute, and hold, one
        return _owner()


def owner_taken() -> bool:
    """Whether this process already has its identity (and lock file): a fork would share both."""
    return _owner.cache_info().currsize > 0


def _lock_state(path: str) -> OwnerState:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        # Missing is not proof: the owner may sit in another mount namespace (a container's
        # own /dev/shm).  A killed owner leaves its file behind, so a dead one is provable.
        return "unknown"
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return "alive"
    except OSError:
        return "unknown"
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return "dead"
    finally:
        os.close(fd)


def owner_state(owner: Owner | None) -> OwnerState:
    """``dead`` only when it is provable from here; ``unknown`` is treated as alive by sweeps."""
    if owner is None:
        return "unknown"
    me = current_owner()
    if owner.boot_id != me.boot_id:
        # Another kernel: another machine, or this one before a reboot.  We cannot tell.
        return "unknown"
    if owner.pid_ns == me.pid_ns and procfs_is_ours():
        ticks = start_ticks(owner.pid)
        return "alive" if ticks is not None and ticks == owner.start_ticks else "dead"
    # Another pid namespace, or a /proc that does not number ours: only the kernel's flock
    # answers (released when its holder dies, whatever namespace either side is in).
    if owner.lock_path:
        return _lock_state(owner.lock_path)
    return "unknown"


def is_dead(owner: Owner | None) -> bool:
    return owner_state(owner) == "dead"


def swept(run_id_of_object: str | None, owner: Owner | None, *, run_id: str | None, include_live: bool,
          keep_run_id: str | None) -> bool:
    """The one rule every sweep applies to a labelled object (database, role, scratch, container).

    ``run_id`` names one run; else ``include_live`` takes every run, and by default only provably
    dead owners' objects go.  ``keep_run_id`` (the sweeping run itself) is never taken.
    """
    if run_id_of_object == keep_run_id:
        return False
    if run_id is not None:
        return run_id_of_object == run_id
    return include_live or is_dead(owner)


def sweep_lock_files(directory: Path | None = None, *, min_age_s: float = 0) -> list[Path]:
    """Delete lock files whose holders are gone (a SIGKILL skips atexit).

    A dead owner's lock file is what lets a sweeper in another pid namespace prove its
    leftovers dead, so automatic sweeps keep it for ``min_age_s``; ``brainbench cleanup``
    removes it at once, after everything it could reach.
    """
    removed = []
    now = time.time()
    for path in (directory or scratch_parent()).glob(f"{LOCK_PREFIX}*.lock"):
        try:
            if now - path.stat().st_mtime < min_age_s:
                continue
        except OSError:
            continue
        try:
            fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # Unlinked while we hold it, so no new owner can lock a file that is about to vanish.
            path.unlink()
            removed.append(path)
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed
