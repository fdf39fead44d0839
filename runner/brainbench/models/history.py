"""A conversation's history as harnesses hand it to hooks: the one shape both sides share.

The runner writes it in each harness's own format (``harnesses/transcripts.py``); the hook
programs read it back from those files (``hooks/transcripts.py``).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HistoryItem:
    """An earlier user/assistant turn, or context a memory hook injected after a turn."""

    role: str  # "user" | "assistant" | "context"
    text: str
