"""Exec mode over ``docker exec``: one fresh hook process per call, supervised in the container.

docker exec does not forward signals, so the timeout runs inside the container:
coreutils/busybox ``timeout`` kills the hook (and its process group) with SIGKILL.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..base import HookCall, HookOutcome
from ..limits import OutputLimitExceeded, oversize_outcome
from .attach import HijackedExec
from .failures import describe

if TYPE_CHECKING:
    from .container import SeamContainer

log = logging.getLogger(__name__)

# `timeout -s KILL` exits 128+9 when it had to kill the hook.
KILLED_EXIT = 137
# timeout runs in the background so that, once the hook exits, its whole process
# group is killed: a leaked child would otherwise hold stdout open and eat the
# container's pids limit.  POSIX sh points a background job's stdin at /dev/null
# before explicit redirections, so the real stdin is handed over on fd 3.
# The supervisor records its own pid and the timeout's (each leads a process
# group) in a pidfile, so the host can still kill the call should the in-container
# timeout itself wedge; the file is removed when the call ends.
# The hook starts in the call's cwd, as a harness starts it; a cwd it cannot enter is the
# runner's fault, reported as exit 75 (backend unavailable: an infrastructure fault).
SUPERVISOR = ('pf="$0"; t="$1"; d="$2"; shift 2; '
              'if [ -n "$d" ]; then cd "$d" 2>/dev/null || { echo "cannot enter cwd $d" >&2; exit 75; }; fi; '
              'exec 3<&0; timeout -s KILL "$t" "$@" <&3 3<&- & p=$!; exec 3<&-; '
              '{ echo "$p $$" > "$pf"; } 2>/dev/null; '
              'wait "$p"; rc=$?; kill -s KILL -- "-$p" 2>/dev/null; rm -f "$pf"; exit "$rc"')
EXEC_PIDFILE_DIR = "/tmp"


def supervised(timeout_s: float, command: Sequence[str], pidfile: str, cwd: str | None = None) -> list[str]:
    return ["/bin/sh", "-c", SUPERVISOR, pidfile, f"{max(timeout_s, 0.001):g}", cwd or "", *command]


def exec_call(seam: SeamContainer, call: HookCall, command: list[str] | None = None) -> HookOutcome:
    """Run the hook (or ``command``) once with ``call``'s stdin and env; blocking."""
    ex = seam.executor
    start = time.perf_counter()

    def infra(exc: BaseException) -> HookOutcome:
        return HookOutcome(None, b"", b"", False, (time.perf_counter() - start) * 1000, infra_error=describe(exc))

    env = {**seam.base_env, **seam.container_env(call.env)}
    try:
        pidfile = f"{EXEC_PIDFILE_DIR}/.brainbench-exec-{uuid.uuid4().hex}"
        exec_id = seam.create_exec(supervised(call.timeout_s, command or seam.hook_cmd, pidfile, call.cwd), env,
                                   in_call=True)
        handle = HijackedExec.start(ex.api.host, ex.api.api_version, exec_id)
    except Exception as exc:
        return infra(exc)
    # Write stdin from a thread: a hook that prints before reading (or never reads)
    # must not deadlock against a large payload.
    writer = threading.Thread(target=_write_and_close, args=(handle, call.payload), daemon=True)
    writer.start()
    deadline = time.monotonic() + call.timeout_s + ex.limits.call_grace_s
    try:
        stdout, stderr = handle.read_all(deadline)
    except OutputLimitExceeded as exc:
        # Over the cap: stop reading and kill the hook's group now, not at its timeout.
        # The attach is closed first: the daemon holds the exec open while its copy of
        # our unread output is blocked (observed: the kill then took ~2.6 s).
        handle.close()
        seam.kill_by_pidfile(pidfile)
        return oversize_outcome(exc, (time.perf_counter() - start) * 1000)
    except TimeoutError:
        # The in-container timeout should have fired; the exec is wedged.  Kill it
        # from the host side and discard the output like any timeout.
        log.warning("docker: %s exec outlived its in-container timeout by %.1fs; killing it", seam.seam,
                    ex.limits.call_grace_s)
        handle.close()
        seam.kill_by_pidfile(pidfile)
        return HookOutcome(None, b"", b"", True, (time.perf_counter() - start) * 1000)
    finally:
        handle.close()
    elapsed = time.perf_counter() - start
    try:
        exit_code = seam.exit_code(exec_id)
    except Exception as exc:
        return infra(exc)
    if exit_code == KILLED_EXIT and elapsed >= call.timeout_s:
        # Killed by the supervisor: discard everything it printed (harness rule).
        return HookOutcome(None, b"", b"", True, elapsed * 1000)
    return HookOutcome(exit_code, stdout, stderr, False, elapsed * 1000)


def _write_and_close(handle: HijackedExec, payload: bytes) -> None:
    if payload:
        handle.send(payload)
    handle.close_write()
