"""Pages the brain volunteers beyond the pointer budget (claude-code hook, spec §4.3)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from brainbench.brain.aliases import normalize_alias
from brainbench.jsstring import WS, trim
from brainbench.reflex.candidates import Candidate
from brainbench.reflex.render import Pointer, Volunteered
from brainbench.reflex.resolve import ARM_CONFIDENCE

_WS_RUN = re.compile(WS + "+")
MIN_CONFIDENCE = 0.70
MAX_VOLUNTEERED = 3
_ARM_TEXT = {
    "alias": "alias match",
    "title": "exact title match",
    "title-surname": "surname match",
    "cjk-title": "exact CJK title/slug match",
    "slug-suffix": "slug match",
}


def volunteer(
    candidates: Sequence[Candidate],
    resolved: Sequence[Pointer],
    exclude_slugs: Sequence[str],
    window_len: int,
    *,
    fold_display: bool = False,
) -> list[Volunteered]:
    """Gate the wide (10-pointer) resolution down to confident extras not already pointed at.

    ``fold_display`` (gbrain 0.60): a display from brain content is folded to one line before
    it reaches the rationale and the bullet, so a multi-line title cannot forge structure.
    """
    by_norm = {normalize_alias(c.query): c for c in candidates}
    out: list[Volunteered] = []
    for p in resolved:
        if len(out) >= MAX_VOLUNTEERED:
            break
        if p.slug in exclude_slugs:
            continue
        cand = by_norm.get(p.matched_norm) or by_norm.get(normalize_alias(p.display))
        boost = 0.05 if cand is not None and (cand.occurrences >= 2 or cand.in_newest_turn) else 0.0
        confidence = min(0.99, ARM_CONFIDENCE[p.arm] + boost)
        if confidence < MIN_CONFIDENCE:
            continue
        display = trim(_WS_RUN.sub(" ", p.display)) if fold_display else p.display
        rationale = f'{_ARM_TEXT[p.arm]} "{display}"'
        if cand is not None:
            if cand.occurrences >= 2:
                rationale += f"; mentioned in {cand.occurrences} of last {window_len} turns"
            elif cand.in_newest_turn:
                rationale += "; mentioned in the newest turn"
            if not cand.user_mention:
                rationale += "; assistant-introduced"
        out.append(Volunteered(p, confidence, rationale, display if fold_display else ""))
    return out
