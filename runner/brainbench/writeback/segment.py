"""Split parsed messages into extraction segments and render each one (spec §6.2).

The rules decide which facts can exist at all: a segment of one message is
dropped silently, so a fact stated across a > 30-minute silence is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from brainbench.models.writeback import SegmentInput
from brainbench.writeback.parse import Message

GAP = timedelta(minutes=30)
MAX_MESSAGES = 30
MIN_MESSAGES = 2
MAX_RENDER_CHARS = 6500


@dataclass(frozen=True)
class Segment:
    messages: tuple[Message, ...]

    @property
    def start_iso(self) -> str:
        return self.messages[0].iso

    @property
    def end_iso(self) -> str:
        return self.messages[-1].iso

    @property
    def participants(self) -> list[str]:
        return list(dict.fromkeys(m.speaker for m in self.messages))


def split_into_segments(messages: Sequence[Message]) -> list[Segment]:
    segments: list[Segment] = []
    current: list[Message] = []

    def flush() -> None:
        if len(current) >= MIN_MESSAGES:
            segments.append(Segment(tuple(current)))
        current.clear()

    for message in messages:
        # Strictly greater: a gap of exactly 30 minutes stays in the same segment.
        if current and (message.at - current[-1].at > GAP or len(current) >= MAX_MESSAGES):
            flush()
        current.append(message)
    flush()
    return segments


def render_segment(segment: Segment, page_title: str) -> str:
    header = (
        f"Page: {page_title}\n"
        f"Conversation between {' and '.join(segment.participants)} from {segment.start_iso} to {segment.end_iso}\n"
        "---\n"
    )
    body = "\n".join(f"{m.speaker} ({m.iso}): {m.text}" for m in segment.messages)
    return (header + body)[:MAX_RENDER_CHARS]


def session_id(page_slug: str) -> str:
    return f"cli:extract-conversation-facts:{page_slug}"


def segment_input(segment: Segment, *, page_slug: str, page_title: str, source: str) -> SegmentInput:
    return SegmentInput(
        text=render_segment(segment, page_title),
        source=source,
        session_id=session_id(page_slug),
        page_slug=page_slug,
        page_title=page_title,
        start_iso=segment.start_iso,
        end_iso=segment.end_iso,
        participants=segment.participants,
        message_count=len(segment.messages),
    )
