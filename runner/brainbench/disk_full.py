"""A full disk under BrainBench's own files: the machine's state, said in one line, never "a bug"."""

from __future__ import annotations

import errno
from typing import TypeGuard

DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(exc: BaseException) -> TypeGuard[OSError]:
    return isinstance(exc, OSError) and exc.errno in DISK_FULL_ERRNOS


def disk_full_message(exc: OSError) -> str:
    where = f" writing {exc.filename}" if exc.filename else ""
    return f"this machine ran out of disk space{where} ({exc.strerror})"
