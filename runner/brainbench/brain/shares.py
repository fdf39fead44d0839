"""Who went over their share of the shared brain: the record the gates and the watchdog write.

The replay reads it per turn (``since``): a turn of a seam that went over its share during
that turn is a fault of that seam, labelled so, whatever its hook answered.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class ShareLedger:
    """Per seam: how many times it went over, and the first words of what it did."""

    _counts: dict[str, int] = field(default_factory=dict)
    _last: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def breach(self, seam: str, what: str) -> None:
        with self._lock:
            self._counts[seam] = self._counts.get(seam, 0) + 1
            self._last[seam] = what

    def count(self, seam: str) -> int:
        with self._lock:
            return self._counts.get(seam, 0)

    def since(self, seam: str, mark: int) -> str | None:
        """What ``seam`` did since ``count`` returned ``mark``, or None if it kept to its share."""
        with self._lock:
            if self._counts.get(seam, 0) <= mark:
                return None
            return f"seam {seam} went over its share of the shared brain: {self._last[seam]}"

    def seams(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)
