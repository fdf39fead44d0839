"""gbrain's ``imessage-slack`` conversation parser (spec §6.2; conversation-parser/parse.ts).

The body is split on ``\\r?\\n`` and every line is trimmed (JavaScript ``trim``); blank
lines and ``## YYYY-MM-DD`` date headings are dropped.  An anchor line starts a message
(its text trimmed); any other line joins the previous message after a ``\\n`` -- so a turn
whose text held blank lines, CRLF or edge whitespace is no longer verbatim in its segment,
and the gold extractor loses its fact exactly when gbrain's does.

A message's timestamp is the text ``YYYY-MM-DDTHH:MM:00Z`` built from the anchor, hour
unchecked (``13:00 PM`` stays 13); segmentation then reads it with ``Date.parse``, and a
message whose timestamp JavaScript cannot read is skipped there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainbench.jscase import LETTER, NUMBER
from brainbench.jsdate import parse as date_parse
from brainbench.jsstring import WS, trim

# The JS regex ^\*\*(.+?)\*\*\s*\((\d{4}-\d{2}-\d{2})\s+(\d{1,2}):(\d{2})\s*(AM|PM|am|pm)?\)\s*:\s*(.*)$
# with JS meanings: \s is ECMAScript whitespace, \d is ASCII, "." stops at every JS
# line terminator (CR, U+2028, U+2029 too) and $ is the end of the line only.
_ANY = r"[^\n\r\u2028\u2029]"
ANCHOR = re.compile(
    rf"^\*\*({_ANY}+?)\*\*{WS}*\(([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}){WS}+([0-9]{{1,2}}):([0-9]{{2}}){WS}*"
    rf"(AM|PM|am|pm)?\){WS}*:{WS}*({_ANY}*)\Z"
)
_DATE_HEADING = re.compile(rf"#{{1,4}}{WS}+[0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}{WS}*\Z")
_LINES = re.compile(r"\r?\n")
# builtins.ts DEFAULT_SPEAKER_CLEAN /^[^\p{L}\p{N}]+\s*/u: leading non-letters go.
_SPEAKER_JUNK = re.compile(rf"[^{LETTER}{NUMBER}]+{WS}*")


@dataclass(frozen=True)
class Message:
    speaker: str
    iso: str  # YYYY-MM-DDTHH:MM:00Z as the anchor spelled it
    text: str

    @property
    def time(self) -> float | None:
        """``Date.parse(iso)``: ms, or None when JavaScript cannot read it."""
        return date_parse(self.iso)


def _clean_speaker(raw: str) -> str:
    m = _SPEAKER_JUNK.match(raw)
    stripped = trim(raw[m.end() :] if m else raw)
    return stripped or trim(raw)


def _iso(date: str, hour_text: str, minute_text: str, meridiem: str | None) -> str:
    hour = int(hour_text)
    if meridiem is not None:
        if meridiem.upper() == "PM" and hour < 12:
            hour += 12
        elif meridiem.upper() == "AM" and hour == 12:
            hour = 0
    return f"{date}T{hour:02d}:{minute_text}:00Z"


def parse_messages(body: str) -> list[Message]:
    """Anchor lines start messages; any other non-blank line continues the previous message."""
    messages: list[Message] = []
    for raw in _LINES.split(body):
        line = trim(raw)
        if not line or _DATE_HEADING.match(line):
            continue
        m = ANCHOR.match(line) if line.startswith("**") else None
        if m:
            messages.append(Message(_clean_speaker(m.group(1)), _iso(*m.group(2, 3, 4, 5)), trim(m.group(6))))
        elif messages:
            last = messages[-1]
            text = f"{last.text}\n{line}" if last.text else line
            messages[-1] = Message(last.speaker, last.iso, text)
    return messages
