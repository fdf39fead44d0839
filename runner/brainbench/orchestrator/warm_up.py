"""One ungraded call that wakes an image-seeded brain before its first graded turn.

A production hook may start its memory system's own server on first use (gbrain's wrapper
starts ``gbrain serve`` for each database and source) and give up on a slow answer after its
own deadline (gbrain's hook: 800 ms).  Without this call that start-up is paid inside the
fixture's first graded turn, whose answer can then be silence because of our set-up rather
than the memory system.  Stream processes are warmed before the run for the same reason.

The call uses its own session id and work directory, names no entity (so a hook that reads
the prompt finds nothing to inject), and its answer is dropped: it never becomes a row,
trace, fault or hook-call count.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from brainbench.executors.base import SeamProcess
from brainbench.harnesses.registry import SeamSpec
from brainbench.models.corpus import PublicTurn
from brainbench.orchestrator.conversation import Conversation

WARM_UP_PROMPT = "ok"


async def warm_up(spec: SeamSpec, process: SeamProcess, env: Mapping[str, str], workdir: Path,
                  timeout_s: float, key: str) -> float:
    """Send the warm-up prompt; the call's wall time in ms (its outcome is not graded)."""
    turn = PublicTurn(turn_id=0, role="user", text=WARM_UP_PROMPT)
    conv = Conversation(spec, process, f"brainbench-warm-up-{key}", workdir, env, timeout_s, script=[turn])
    await conv.user_turn(turn)
    return conv.durations_ms[-1] if conv.durations_ms else 0.0
