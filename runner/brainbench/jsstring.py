"""JavaScript string semantics where gbrain's behaviour depends on them.

gbrain is TypeScript: its ``\\s``, ``trim()``, ``split(/\\s+/)``, ``.length`` and
``slice`` follow ECMAScript, and Python's nearest equivalents differ at the edges:

* whitespace -- ECMAScript's WhiteSpace ∪ LineTerminator includes U+FEFF and
  excludes U+001C–U+001F and U+0085, which ``str.isspace``/``strip``/``split``
  and the ``re``/``regex`` ``\\s`` treat as space;
* length -- JS counts UTF-16 code units, so an astral character is 2 long;
* slicing -- JS cuts code units and can leave half a surrogate pair.  Python
  strings hold such a lone surrogate as one code point (U+D800–U+DFFF), which
  ``jsjson.stringify`` writes as ``\\udXXX`` exactly like ``JSON.stringify``.

Every rule the spec derives from a JS regex or string method goes through here
(docs/FIDELITY.md lists them).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = [
    "NOT_WS",
    "WHITESPACE",
    "WS",
    "is_space",
    "js_len",
    "js_slice",
    "split_ws",
    "trim",
    "trim_end",
    "trim_start",
    "utf8_bytes",
    "without_lone_surrogates",
]

# ECMAScript WhiteSpace (TAB VT FF SP NBSP ZWNBSP + every Zs) ∪ LineTerminator (LF CR LS PS).
WHITESPACE = frozenset(
    "\t\n\x0b\x0c\r \u00a0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)

# The same set as regex character-class text, for both ``re`` and ``regex``:
# ``WS`` stands for JS ``\s``, ``NOT_WS`` for JS ``\S``.
_CLASS_BODY = r"\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
WS = f"[{_CLASS_BODY}]"
NOT_WS = f"[^{_CLASS_BODY}]"

_WS_STR = "".join(sorted(WHITESPACE))


def is_space(ch: str) -> bool:
    """JS ``/\\s/.test(ch)`` for one character."""
    return ch in WHITESPACE


def trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(_WS_STR)


def trim_start(text: str) -> str:
    """``String.prototype.trimStart``."""
    return text.lstrip(_WS_STR)


def trim_end(text: str) -> str:
    """``String.prototype.trimEnd``."""
    return text.rstrip(_WS_STR)


def split_ws(text: str) -> list[str]:
    """``text.split(/\\s+/)``: empty strings at either end are kept, as in JS."""
    out: list[str] = []
    current: list[str] = []
    in_space = False
    for ch in text:
        if ch in WHITESPACE:
            if not in_space:
                out.append("".join(current))
                current = []
                in_space = True
        else:
            current.append(ch)
            in_space = False
    out.append("".join(current))
    return out


def _units(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


def js_len(text: str) -> int:
    """``text.length``: UTF-16 code units (an astral character counts 2, a lone surrogate half 1)."""
    if text.isascii():
        return len(text)
    return len(_units(text)) // 2


def js_slice(text: str, start: int, end: int | None = None) -> str:
    """``text.slice(start, end)`` in UTF-16 code units.

    Cutting inside a surrogate pair leaves the lone half, as JS does; a pair of
    halves that end up adjacent is one astral character again.
    """
    units = _units(text)
    n = len(units) // 2

    def bound(i: int) -> int:
        return max(0, n + i) if i < 0 else min(i, n)

    lo = bound(start)
    hi = n if end is None else bound(end)
    if hi <= lo:
        return ""
    return units[2 * lo : 2 * hi].decode("utf-16-le", "surrogatepass")


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def holds_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (a lone half, in a Python ``str``)."""
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def without_lone_surrogates(value: Any) -> Any:
    """A JSON value with every lone surrogate in its strings (keys too) as U+FFFD.

    For the places a lone half cannot go: a pydantic ``str``, or a payload that
    will be written as UTF-8.  U+FFFD is one UTF-16 unit like the half and, like
    it, neither letter, digit nor space.  Lists and dicts holding a half are
    rebuilt, not mutated; a value that holds none (nearly every one) is returned
    as it is, since copying it cost a hook call's payload as much as encoding it.
    """
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if not _holds_surrogate(value):
        return value
    root: list[Any] = [value]
    stack: list[tuple[Any, Any]] = [(root, 0)]
    while stack:  # iterative: nesting depth is the input's, not ours
        container, key = stack.pop()
        item = container[key]
        if isinstance(item, str):
            container[key] = _LONE_SURROGATE.sub("\ufffd", item)
        elif isinstance(item, list):
            copy = list(item)
            container[key] = copy
            stack.extend((copy, i) for i in range(len(copy)))
        elif isinstance(item, dict):
            copy_d = {_LONE_SURROGATE.sub("\ufffd", k) if isinstance(k, str) else k: v for k, v in item.items()}
            container[key] = copy_d
            stack.extend((copy_d, k) for k in copy_d)
    return root[0]


def _holds_surrogate(value: Any) -> bool:
    """Whether a string of the JSON value (a key too) holds a surrogate code point."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if holds_surrogate(item):
                return True
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
    return False


def utf8_bytes(text: str) -> bytes:
    """UTF-8 as Node's ``Buffer.from``/``TextEncoder`` writes it: a lone surrogate becomes U+FFFD."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _units(text).decode("utf-16-le", "replace").encode("utf-8")
