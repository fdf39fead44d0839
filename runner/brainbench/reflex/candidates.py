"""Candidate entity mentions in text (spec §3.1) and across a turn window (§3.2)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from brainbench.brain.aliases import normalize_alias
from brainbench.jscase import LETTER, LOWER, NUMBER, UPPER, js_lower
from brainbench.jsstring import WS, is_space, js_len, split_ws, trim
from brainbench.reflex.vocab import (
    COMMON_WORDS,
    MAX_CANDIDATES,
    MAX_CJK_CANDIDATES,
    MAX_WEAK_CANDIDATES,
    STOPWORDS,
)

_HANDLE = re.compile(r"@([A-Za-z0-9_]{2,})")
# \p{Lu} and friends as gbrain's JavaScript engine classifies letters (jscase), written as classes
# for the standard library's re: it compiles these ~10 kB classes in half the time the regex module
# does and matches them several times faster, with the same matches (per code point, as JS's u flag).
_CAP_TOKEN = rf"[{UPPER}][{LETTER}0-9'’\-]*(?:\.[{LETTER}][{LETTER}0-9'’\-]*)*"
_CAP_RUN = re.compile(rf"{_CAP_TOKEN}(?:{WS}+{_CAP_TOKEN}){{0,3}}")
_WEAK = re.compile(
    rf"(?<![{LETTER}{NUMBER}'’@-])[{LOWER}][{LETTER}{NUMBER}'’-]{{2,}}(?![{LETTER}{NUMBER}'’-])")
_NUMBER = re.compile(r"^[0-9][0-9.,]*\Z")
_WS = re.compile(WS)
# gbrain's fixed CJK ranges (cjk.ts CJK_SLUG_CHARS), not Unicode scripts: Han U+4E00–9FFF,
# hiragana U+3040–309F, katakana U+30A0–30FF, hangul syllables U+AC00–D7AF.  All BMP, so a
# run is never cut inside a surrogate pair; Han extensions (astral included) are not CJK here.
CJK_CHARS = "\u4e00-\u9fff\u3040-\u309f\u30a0-\u30ff\uac00-\ud7af"
_CJK = re.compile(f"[{CJK_CHARS}]")
_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_HIRAGANA_ONLY = re.compile("^[\u3040-\u309f]+\\Z")
# [sS], not IGNORECASE: JS /i without the u flag never folds ſ (U+017F) onto s.
_POSSESSIVE = re.compile(r"['’][sS]\Z")
_APOSTROPHE = re.compile(r"['’]\Z")
_SENTENCE_MARKS = frozenset(".!?:;•-([\"“")


@dataclass
class Candidate:
    display: str
    query: str
    weak: bool = False
    # Window-only signals (§3.2); a single-text extraction leaves the defaults.
    occurrences: int = 1
    in_newest_turn: bool = True
    user_mention: bool = True


def strip_possessive(text: str) -> str:
    return _APOSTROPHE.sub("", _POSSESSIVE.sub("", text))


def is_at_sentence_start(text: str, index: int) -> bool:
    i = index - 1
    while i >= 0 and is_space(text[i]):
        i -= 1
    return i < 0 or text[i] in _SENTENCE_MARKS


@dataclass
class _Sighting:
    display: str
    query: str
    multi_token: bool
    mid_sentence: bool


def extract_candidates(text: str) -> list[Candidate]:
    """Strong candidates (≤12) in first-seen order, then weak lowercase ones (≤32), then CJK n-grams."""
    if not isinstance(text, str) or not text:
        return []
    found: dict[str, _Sighting] = {}

    def consider(display: str, query: str, mid_sentence: bool) -> None:
        q = strip_possessive(trim(query))
        norm = normalize_alias(q)
        if not q or not norm:
            return
        if norm in found:
            found[norm].mid_sentence |= mid_sentence
            return
        found[norm] = _Sighting(trim(display), q, bool(_WS.search(q)), mid_sentence)

    for m in _HANDLE.finditer(text):
        consider(m.group(0), m.group(1), True)
    for m in _CAP_RUN.finditer(text):
        surface = m.group(0)
        consider(surface, surface, not is_at_sentence_start(text, m.start()))
        tokens = split_ws(surface)
        lead = 0
        while lead < len(tokens) and js_lower(strip_possessive(tokens[lead])) in STOPWORDS:
            lead += 1
        if 0 < lead < len(tokens):
            rest = " ".join(tokens[lead:])
            consider(rest, rest, True)

    strong: list[Candidate] = []
    for s in found.values():
        if not s.multi_token:
            lower = js_lower(s.query)
            if js_len(s.query) < 2 or _NUMBER.match(s.query) or lower in STOPWORDS:
                continue
            if lower in COMMON_WORDS and not s.mid_sentence:
                continue
        strong.append(Candidate(s.display, s.query))
        if len(strong) >= MAX_CANDIDATES:
            break

    taken = {normalize_alias(c.query) for c in strong}
    weak: list[Candidate] = []
    for m in _WEAK.finditer(text):
        if len(weak) >= MAX_WEAK_CANDIDATES:
            break
        raw = strip_possessive(m.group(0))
        lower = js_lower(raw)
        if js_len(raw) < 3 or lower in STOPWORDS or lower in COMMON_WORDS:
            continue
        norm = normalize_alias(raw)
        if not norm or norm in taken:
            continue
        taken.add(norm)
        weak.append(Candidate(raw, raw, weak=True))

    return strong + weak + _cjk_candidates(text, taken)


def _cjk_candidates(text: str, taken: set[str]) -> list[Candidate]:
    if not _CJK.search(text):
        return []
    out: list[Candidate] = []
    for m in _CJK_RUN.finditer(text):
        run = m.group(0)
        # Every run character is BMP, so UTF-16 units (gbrain's run.length, run.slice) are characters.
        size = len(run)
        if size < 2:
            continue
        grams = [run] if size <= 4 else [run[i : i + n] for i in range(size - 1) for n in (4, 3, 2) if i + n <= size]
        for gram in grams:
            if _HIRAGANA_ONLY.match(gram):
                continue
            norm = normalize_alias(gram)
            if not norm or norm in taken:
                continue
            taken.add(norm)
            out.append(Candidate(gram, gram, weak=True))
            if len(out) >= MAX_CJK_CANDIDATES:
                return out
    return out


@dataclass
class _Merged:
    candidate: Candidate
    occurrences: int
    last_turn: int
    in_newest: bool
    user_mention: bool
    order: int


def extract_candidates_from_window(turns: Sequence[tuple[str, str]]) -> list[Candidate]:
    """Merge per-turn candidates of (role, text) turns, oldest first, ranked by salience."""
    merged: dict[str, _Merged] = {}
    last = len(turns) - 1
    for idx, (role, text) in enumerate(turns):
        if not text:
            continue
        for cand in extract_candidates(text):
            norm = normalize_alias(cand.query)
            entry = merged.get(norm)
            is_user = role == "user"
            if entry is None:
                merged[norm] = _Merged(
                    Candidate(cand.display, cand.query, cand.weak), 1, idx, idx == last, is_user, len(merged)
                )
                continue
            entry.occurrences += 1
            entry.last_turn = idx
            entry.in_newest |= idx == last
            if entry.candidate.weak and not cand.weak:
                # A strong sighting promotes a weak-born candidate, but an
                # assistant-only sighting never overrides a user's display.
                entry.candidate.weak = False
                if not (entry.user_mention and not is_user):
                    entry.candidate.display, entry.candidate.query = cand.display, cand.query
            if is_user and not entry.user_mention:
                entry.candidate.display, entry.candidate.query = cand.display, cand.query
                entry.user_mention = True
    n = len(turns) or 1

    def weight(e: _Merged) -> float:
        return (e.last_turn + 1) / n + min(e.occurrences, 4) * 0.1 + (0.15 if e.user_mention else 0.0)

    ranked = sorted(merged.values(), key=lambda e: (e.candidate.weak, -weight(e), e.order))
    strong = [e for e in ranked if not e.candidate.weak][:MAX_CANDIDATES]
    weak = [e for e in ranked if e.candidate.weak][:MAX_WEAK_CANDIDATES]
    out = []
    for e in strong + weak:
        c = e.candidate
        out.append(Candidate(c.display, c.query, c.weak, e.occurrences, e.in_newest, e.user_mention))
    return out
