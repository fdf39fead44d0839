"""Render a fixture's turns as gbrain's bench conversation page (spec §6.1)."""

from __future__ import annotations

from brainbench.corpus.timestamps import parse_ts
from brainbench.jsdate import JSDate
from brainbench.models.corpus import Fixture, Turn

SLUG_PREFIX = "conversations/bench-"
_SPEAKER = {"user": "You", "assistant": "Assistant"}


class MissingTimestampError(ValueError):
    """A turn has no usable ``ts``; the loader should have rejected the fixture."""


def conversation_slug(fixture_id: str) -> str:
    return SLUG_PREFIX + fixture_id


def page_title(fixture_id: str) -> str:
    return f"Bench conversation {fixture_id}"


def render_time(instant: JSDate) -> str:
    """gbrain's renderInlineTime: ``toISOString().slice(0, 10)`` and the UTC ``H:MM AM|PM``.

    Seconds are dropped (truncated, not rounded).  A year outside 0000–9999 prints as
    ``+010000-01``, which no message line matches: gbrain's parser then reads that turn as
    part of the one before.
    """
    iso = instant.iso()
    hour24, minute = int(iso[-13:-11]), int(iso[-10:-8])
    return f"{iso[:10]} {hour24 % 12 or 12}:{minute:02d} {'AM' if hour24 < 12 else 'PM'}"


def _turn_instant(fixture_id: str, turn: Turn) -> JSDate:
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
