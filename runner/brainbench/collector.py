"""The garbage collector's policy for a process that imports a large stack and then works.

Importing the runner (pydantic models, psycopg, the case tables) allocates some hundred thousand
objects that live until the process ends; the hook server's stack a third of that.  With the
collector on, every few hundred allocations start a collection, and the older generations walk
that whole heap again and again: measured here, a tenth of the runner's import time, and the
same tables cost 2 ms alone but 40 ms imported after pydantic.  So a program that owns its
process defers collection while it imports, then *freezes* what it imported (``gc.freeze``:
those objects are never scanned again; they could not be garbage anyway, being module state)
and collects as usual from there.

Only programs call this (``brainbench.cli.entry`` for a run, the warm hook server): a library
caller's process keeps its own collector untouched.
"""

from __future__ import annotations

import gc

_deferred = False


def defer() -> None:
    """No collection until :func:`resume`: the process is about to import its stack."""
    global _deferred
    if gc.isenabled():
        gc.disable()
        _deferred = True


def resume() -> None:
    """Freeze everything made so far and collect again; a no-op unless :func:`defer` turned it off."""
    global _deferred
    if _deferred:
        _deferred = False
        gc.freeze()
        gc.enable()
