"""What the runner reads from injected context: only the text that came back on the wire.

A production hook image is not our code, so the grader cannot ask the hook which
pages it meant; it recovers them the way a reader of ``additionalContext`` would.
"""

from __future__ import annotations

import math
import re

from brainbench.jsstring import js_len

# The pointer convention of the wire (spec §3.6): ``→ `slug` `` names a page to open.
_SLUG_IN_TEXT = re.compile(r"→ `([^`\n]+)`")


def estimate_tokens(text: str | None) -> int:
    """ceil(length / 4) in UTF-16 code units, the length JavaScript reports."""
    if not text:
        return 0
    # js_len, not an encode: a clip may leave a lone surrogate half, which JS counts as one unit.
    return math.ceil(js_len(text) / 4)


def slugs_in_text(text: str | None) -> list[str]:
    """Slugs a reader of the injected text would open: every ``→ `slug``` in order, unique."""
    if not text:
        return []
    return list(dict.fromkeys(_SLUG_IN_TEXT.findall(text)))
