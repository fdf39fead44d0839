"""Split parsed messages into extraction segments and render each one (spec §6.2).

The rules decide which facts can exist at all: a segment of one message is
dropped silently, so a fact stated across a > 30-minute silence is lost.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from brainbench.jsstring import js_len, js_slice
from brainbench.models.writeback import SegmentInput
from brainbench.writeback.parse import Message

GAP_MS = 30 * 60_000
MAX_MESSAGES = 30
MIN_MESSAGES = 2
MAX_RENDER_CHARS = 6500  # UTF-16 code units, as JavaScript's .length counts
_TRUNCATED = "\n…(truncated)"


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
    """gbrain's splitIntoSegments: messages whose timestamp ``Date.parse`` cannot read are skipped."""
    segments: list[Segment] = []
    current: list[Message] = []
    last: float | None = None

    def flush() -> None:
        if len(current) >= MIN_MESSAGES:
            segments.append(Segment(tuple(current)))
        current.clear()

    for message in messages:
        at = message.time
        if at is None:
            continue
        # Strictly greater: a gap of exactly 30 minutes stays in the same segment.
        if last is not None and at - last > GAP_MS:
            flush()
        current.append(message)
        last = at
        if len(current) >= MAX_MESSAGES:
            flush()
            last = None
    flush()
    return segments


def render_segment(segment: Segment, page_title: str) -> str:
    """renderSegmentForExtraction: over 6,500 UTF-16 units, the header stays whole and the body is
    cut at the limit minus the header and 16 (a cut may split a surrogate pair, as JS slice does)."""
    header = (
        f"Page: {page_title}\n"
        f"Conversation between {' and '.join(segment.participants)} from {segment.start_iso} to {segment.end_iso}\n"
        "---"
    )
    body = "\n".join(f"{m.speaker} ({m.iso}): {m.text}" for m in segment.messages)
    full = f"{header}\n{body}"
    if js_len(full) <= MAX_RENDER_CHARS:
        return full
    slack = MAX_RENDER_CHARS - js_len(header) - 16
    return f"{header}\n{js_slice(body, 0, max(0, slack))}{_TRUNCATED}"


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
