"""Render a fixture's turns as gbrain's bench conversation page (spec §6.1)."""

from __future__ import annotations

from datetime import datetime

from brainbench.corpus.timestamps import parse_ts
from brainbench.models.corpus import Fixture, Turn

SLUG_PREFIX = "conversations/bench-"
_SPEAKER = {"user": "You", "assistant": "Assistant"}


class MissingTimestampError(ValueError):
    """A turn has no usable ``ts``; the loader should have rejected the fixture."""


def conversation_slug(fixture_id: str) -> str:
    return SLUG_PREFIX + fixture_id


def page_title(fixture_id: str) -> str:
    return f"Bench conversation {fixture_id}"


def render_time(instant: datetime) -> str:
    """``YYYY-MM-DD H:MM AM|PM`` in UTC; seconds are dropped (truncated, not rounded)."""
    hour = instant.hour % 12 or 12
    meridiem = "AM" if instant.hour < 12 else "PM"
    return f"{instant.date().isoformat()} {hour}:{instant.minute:02d} {meridiem}"


def _turn_instant(fixture_id: str, turn: Turn) -> datetime:
    instant = parse_ts(turn.ts) if turn.ts is not None else None
    if instant is None:
        raise MissingTimestampError(
            f"write-back fixture {fixture_id} turn {turn.turn_id} requires ts (got {turn.ts!r})"
        )
    return instant


def render_conversation_page(fixture: Fixture) -> str:
    """The markdown imported as ``conversations/bench-<fixture_id>``; one line per turn, trailing newline."""
    lines = [
        f"**{_SPEAKER[t.role]}** ({render_time(_turn_instant(fixture.fixture_id, t))}): {t.text}"
        for t in fixture.turns
    ]
    header = f"---\ntitle: {page_title(fixture.fixture_id)}\ntype: conversation\n---\n\n"
    return header + "\n".join(lines) + "\n"
