"""Ending the CLI's process without the interpreter's teardown.

After a run, CPython's own finalisation (freeing every module, the corpus, the result and the
pydantic models one object at a time) took 0.12-0.16 s of a ~2.7 s gate run on this machine,
after the last byte of output had been written.  A program that has nothing left to do can skip
it: this does what an interpreter exit does that anyone could notice (wait for non-daemon threads,
run the ``atexit`` callbacks, flush the standard streams, the same exit status) and then leaves
with ``os._exit``.

Only the CLI as a program uses it (``brainbench.cli.entry``): a caller of ``brainbench.cli.main``
in its own process keeps its interpreter, and its ``with`` blocks and ``finally`` clauses.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable


def status_of(code: object) -> int:
    """The exit status CPython gives ``SystemExit(code)``, writing a non-integer code to stderr as it does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:  # nothing more can be said on a stream that is gone
        pass
    return 1


def run_then_exit(program: Callable[[], object]) -> None:
    """Run ``program`` (which ends by returning or raising ``SystemExit``), then exit the process at once."""
    try:
        program()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    status = status_of(code)
    main = threading.main_thread()
    for thread in threading.enumerate():
        if thread is not main and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed pipe loses nothing more than it already has
            status = 120  # what CPython exits with when it cannot flush a standard stream at exit
    os._exit(status)
