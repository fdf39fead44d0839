"""Turn timestamps: what counts as a valid ``ts`` and which instant it names.

gbrain accepts a ``ts`` exactly when ``Date.parse`` does (fixtures.ts: "turns[i].ts must
be ISO 8601") and renders the write-back page from ``new Date(ts)``: so RFC 2822 with a
two-digit year (``99`` → 1999, ``49`` → 2049), lower-case ``t``/``z``, "Jan 5 2024" and the
other forms JavaScript reads are valid, and what it refuses is refused here, as one line
naming the file and field (rules.py).  See jsdate for the parser and the UTC zone.
"""

from __future__ import annotations

from brainbench.jsdate import JSDate, parse


def parse_ts(value: str) -> JSDate | None:
    """The ``Date`` of ``value``, or None when ``Date.parse`` gives NaN."""
    time = parse(value)
    return None if time is None else JSDate(time)
