"""gbrain's ``imessage-slack`` conversation parser (spec §6.2).

Times carry no zone, and gbrain reads them as UTC (``inline_utc``), which is also
how page.py rendered them, so a render → parse round trip keeps the minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from brainbench.jsstring import WS

# The JS regex ^\*\*(.+?)\*\*\s*\((\d{4}-\d{2}-\d{2})\s+(\d{1,2}):(\d{2})\s*(AM|PM|am|pm)?\)\s*:\s*(.*)$
# with JS meanings: \s is ECMAScript whitespace, \d is ASCII, "." stops at every JS
# line terminator (CR, U+2028, U+2029 too) and $ is the end of the line only.
_ANY = r"[^\n\r\u2028\u2029]"
ANCHOR = re.compile(
    rf"^\*\*({_ANY}+?)\*\*{WS}*\(([0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}){WS}+([0-9]{{1,2}}):([0-9]{{2}}){WS}*"
    rf"(AM|PM|am|pm)?\){WS}*:{WS}*({_ANY}*)\Z"
)


@dataclass(frozen=True)
class Message:
    speaker: str
    at: datetime
    text: str

    @property
    def iso(self) -> str:
        return iso_minute(self.at)


def iso_minute(instant: datetime) -> str:
    return instant.strftime("%Y-%m-%dT%H:%M:00Z")


def _instant(date: str, hour_text: str, minute_text: str, meridiem: str | None) -> datetime | None:
    hour, minute = int(hour_text), int(minute_text)
    if meridiem is not None:
        pm = meridiem.lower() == "pm"
        if not 1 <= hour <= 12:
            return None
        hour = (hour % 12) + (12 if pm else 0)
    try:
        return datetime.fromisoformat(f"{date}T{hour:02d}:{minute:02d}:00").replace(tzinfo=UTC)
    except ValueError:
        return None


def parse_messages(body: str) -> list[Message]:
    """Anchor lines start messages; any other line continues the previous message."""
    messages: list[Message] = []
    for line in body.split("\n"):
        m = ANCHOR.match(line)
        at = _instant(m.group(2), m.group(3), m.group(4), m.group(5)) if m else None
        if m and at is not None:
            messages.append(Message(m.group(1), at, m.group(6)))
        elif messages:
            last = messages[-1]
            messages[-1] = Message(last.speaker, last.at, f"{last.text}\n{line}")
    return messages
