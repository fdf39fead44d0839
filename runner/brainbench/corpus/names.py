"""Telling a user which fixture ids exist when the one they named does not."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

LIST_COMMAND = "`brainbench validate --list` lists the fixture ids"


def unknown_fixture_hint(wanted: Sequence[str], ids: Sequence[str]) -> str:
    """``did you mean …?`` for near misses (a typo), else where the ids can be listed."""
    near = sorted({m for w in wanted for m in difflib.get_close_matches(w, list(ids), n=3)})
    if near:
        return f"did you mean {', '.join(near)}?"
    return LIST_COMMAND
