"""Case mapping and letter classes of gbrain's reference runtime, not of this Python.

gbrain folds case in two places, with two different tables:

* JavaScript ``toLowerCase`` (candidate and title matching, aliases, slugs, write-back
  keywords): bun's JavaScriptCore, whose Unicode is newer than Python 3.11's 14.0 --
  ``"\\ua7cb".lower()`` is unchanged here and ``"\\u0264"`` there;
* SQL ``lower()`` and ``ILIKE`` (title rows, surname rows, the continuity keyword probe):
  gbrain's PGLite, a C.UTF-8 database whose ``towlower`` is musl's, one character to one
  (``İ`` → ``i``, never ``i̇``; no final sigma; circled letters unchanged).

The tables are generated from that runtime by ``scripts/gen-case-tables`` (``tables.py``).
The regex letter classes (``\\p{Lu}`` …) of gbrain's ``u``-flag patterns come from the same
engine: the ``regex`` module's Unicode is newer still and counts letters JavaScript does not.
"""

from __future__ import annotations

from collections.abc import Iterable

from brainbench.jscase import tables

__all__ = ["LETTER", "LOWER", "NUMBER", "SQL_LOWER_FROM", "SQL_LOWER_TO", "UPPER", "js_lower", "sql_lower"]

_JS_TABLE: dict[int, str] = {c: "".join(map(chr, low)) for c, low in tables.JS_LOWER.items()}
_SQL_TABLE: dict[int, str] = {c: chr(low) for c, low in tables.SQL_LOWER.items()}
_SIGMA = "\u03a3"

# translate(text, SQL_LOWER_FROM, SQL_LOWER_TO) is gbrain's lower(text), in any PostgreSQL
# whatever its locale: one character to one, as musl maps them.
SQL_LOWER_FROM = "".join(chr(c) for c in tables.SQL_LOWER)
SQL_LOWER_TO = "".join(chr(c) for c in tables.SQL_LOWER.values())


def _contains(ranges: tuple[tuple[int, int], ...], c: int) -> bool:
    lo, hi = 0, len(ranges)
    while lo < hi:
        mid = (lo + hi) // 2
        a, b = ranges[mid]
        if c < a:
            hi = mid
        elif c > b:
            lo = mid + 1
        else:
            return True
    return False


def _cased(ch: str) -> bool:
    return _contains(tables.CASED, ord(ch))


def _ignorable(ch: str) -> bool:
    return _contains(tables.CASE_IGNORABLE, ord(ch))


def _final_sigma(text: str, i: int) -> bool:
    """Unicode's Final_Sigma context for the Σ at ``i``: a cased letter before it and none after,
    case-ignorable characters skipped on both sides."""
    j = i - 1
    while j >= 0 and _ignorable(text[j]):
        j -= 1
    if j < 0 or not _cased(text[j]):
        return False
    j = i + 1
    while j < len(text) and _ignorable(text[j]):
        j += 1
    return j == len(text) or not _cased(text[j])


def js_lower(text: str) -> str:
    """``text.toLowerCase()`` in gbrain's runtime (lone surrogates pass through)."""
    if _SIGMA not in text:
        return text.translate(_JS_TABLE)
    return "".join(
        ("\u03c2" if _final_sigma(text, i) else "\u03c3") if ch == _SIGMA else ch.translate(_JS_TABLE)
        for i, ch in enumerate(text)
    )


def sql_lower(text: str) -> str:
    """PostgreSQL ``lower(text)`` in gbrain's PGLite; ``a ILIKE p`` is ``sql_lower(a) LIKE sql_lower(p)``."""
    return text.translate(_SQL_TABLE)


# What a character class reads as syntax; never a letter or a digit, still escaped should a table hold one.
_CLASS_SYNTAX = frozenset("\\]^-[")


def _member(code: int) -> str:
    ch = chr(code)
    return "\\" + ch if ch in _CLASS_SYNTAX else ch


def _class(ranges: Iterable[tuple[int, int]]) -> str:
    # The characters themselves, not \U escapes: the same class for ``re`` and ``regex``, and the
    # regex module parses a literal about twice as fast as an escape (these classes are compiled
    # at every start of the runner and of the hook server).
    return "".join(_member(a) if a == b else f"{_member(a)}-{_member(b)}" for a, b in ranges)


# Character-class bodies for JS ``\p{Lu}``, ``\p{Ll}``, ``\p{L}``, ``\p{N}`` (use inside ``[...]``).
UPPER = _class(tables.LU)
LOWER = _class(tables.LL)
LETTER = _class(tables.L)
NUMBER = _class(tables.N)
