"""Turn timestamps: what counts as a valid ``ts`` and how it maps to an instant."""

from __future__ import annotations

from datetime import UTC, datetime
from email.utils import parsedate_to_datetime


def parse_ts(value: str) -> datetime | None:
    """Return the UTC instant of ``value`` or None when it is not a timestamp.

    gbrain accepts whatever JS ``Date.parse`` accepts; that set is engine-specific,
    so we take its portable core: ISO 8601 and RFC 2822.  A timestamp without an
    offset is read as UTC (JS would use the machine's zone, which would make
    segmentation depend on where the benchmark runs).
    """
    text = value.strip()
    if not text:
        return None
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        try:
            parsed = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.astimezone(UTC)
