"""JavaScript-compatible numbers and JSON text.

gbrain writes every persisted document with ``JSON.stringify(obj, null, 2)`` and
rounds metrics with ``Math.round``.  Byte equality of baselines is part of the gate
(a committed baseline must serialize *identically* to a fresh run), so Python's
defaults are not good enough: ``json.dumps`` prints ``1.0`` where JS prints ``1``,
and ``round`` rounds half to even where JS rounds half toward +infinity.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

from brainbench.jsstring import holds_surrogate

__all__ = [
    "MadeOnDemand",
    "js_json_chunks",
    "js_json_dumps",
    "js_math_round",
    "js_number",
    "js_parse_float",
    "js_parse_int",
    "js_sort_key",
    "js_sorted",
    "js_to_fixed",
    "json_parse_number",
    "round4",
    "stringify",
]

_ARRAY_INDEX_MAX = 2**32 - 2


def js_math_round(x: float) -> float:
    """``Math.round``: the nearest integer, ties toward +infinity.

    Computed as floor plus a comparison of the exact fractional part rather than
    ``floor(x + 0.5)``: the addition itself rounds for values such as
    0.49999999999999994, where JS (per ECMAScript) returns 0, not 1.
    """
    if not math.isfinite(x):
        return x
    lower = math.floor(x)
    # x - floor(x) is exact for every double, so the tie test is exact too.
    result = float(lower + 1) if x - lower >= 0.5 else float(lower)
    # Math.round keeps the sign of zero for inputs in [-0.5, 0): String(-0) is "0",
    # so only the arithmetic matters, but keep the float type stable.
    return result


def round4(x: float) -> float:
    """gbrain's ``round4``: ``Math.round(x * 10000) / 10000`` on the float product."""
    return js_math_round(float(x) * 10000) / 10000


def js_to_fixed(x: float, digits: int) -> str:
    """``Number.prototype.toFixed``: the exact binary value rounded half up, where Python's
    ``format`` rounds half to even (0.125 → "0.13" in JS, "0.12" in Python)."""
    from decimal import ROUND_HALF_UP, Decimal  # only hot facts print confidences this way

    return str(Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def _shortest_digits(x: float) -> tuple[str, int]:
    """Digits and decimal exponent of the shortest round-trip repr of ``x > 0``.

    Returns ``(digits, n)`` with value ``0.<digits> * 10**n`` -- the ``k``/``n`` of
    ECMAScript's Number::toString.  Python's ``repr`` already yields the shortest
    digit string that round-trips, the same digits JS picks.
    """
    text = repr(x)
    mantissa, _, exp = text.partition("e")
    exponent = int(exp) if exp else 0
    int_part, _, frac_part = mantissa.partition(".")
    digits = int_part + frac_part
    point = len(int_part) + exponent
    stripped = digits.lstrip("0")
    point -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    return digits, point


def js_number(value: float | int) -> str:
    """``String(value)`` for a JS number (ints are treated as doubles, as JS does)."""
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers here")
    x = float(value)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"  # includes -0, which JS prints as "0"
    sign = "-" if x < 0 else ""
    digits, n = _shortest_digits(abs(x))
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        exp = ("+" if e >= 0 else "-") + str(abs(e))
        body = digits + "e" + exp if k == 1 else digits[0] + "." + digits[1:] + "e" + exp
    return sign + body


def js_sort_key(s: str) -> bytes:
    """Sort key equal to JS's default string order (UTF-16 code units).

    Big-endian UTF-16 bytes compare lexicographically exactly like the code-unit
    sequence; code-point order differs only for astral characters.
    """
    return s.encode("utf-16-be", "surrogatepass")


def js_sorted(items: Sequence[str]) -> list[str]:
    """``[...items].sort()`` -- stable, UTF-16 order, duplicates kept."""
    return sorted(items, key=js_sort_key)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _quote(s: str) -> str:
    # JSON.stringify escapes only '"', '\\' and C0 controls (short forms where JSON
    # has them) plus lone surrogates; everything else -- non-ASCII, DEL, U+2028 --
    # is emitted raw.  Python's C encoder with ensure_ascii=False escapes exactly
    # the same set (same lowercase \u00xx form) except surrogates, patched after.  The encoder's
    # own string function, not json.dumps: no encoder object per string.
    out = encode_basestring(s)
    if holds_surrogate(s):
        out = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)
    return out




def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and str(int(key)) == key and int(key) <= _ARRAY_INDEX_MAX


def _js_key_order(keys: list[str]) -> list[str]:
    """Property order of a JS object: array-index keys ascending, then insertion order."""
    if not any(k[:1].isdigit() for k in keys):
        return keys  # the usual case: no key can be an array index
    index_keys = sorted((k for k in keys if _is_array_index(k)), key=int)
    return index_keys + [k for k in keys if not _is_array_index(k)]


def js_json_dumps(
    obj: Any,
    indent: int | None = 2,
    *,
    js_key_order: bool = True,
    default: Callable[[Any], Any] | None = None,
) -> str:
    """Emulate ``JSON.stringify(obj, null, indent)`` byte for byte.

    ``indent=None`` gives the compact single-line form (``JSON.stringify(obj)``).
    Non-finite numbers become ``null`` as in JS.  With ``js_key_order`` (the
    default) integer-like keys come first in ascending order, because that is the
    order a JS object enumerates them in regardless of insertion order.
    ``default`` converts otherwise unsupported values (like ``json.dumps``).
    """
    return _encoder(" " * indent if indent else "", js_key_order, default)(obj, "")


class MadeOnDemand(Sequence[Any]):
    """A JSON array whose members ``make`` turns into JSON values one at a time, as
    :func:`js_json_chunks` writes them (only within its outer ``depth`` levels)."""

    def __init__(self, items: Sequence[Any], make: Callable[[Any], Any]) -> None:
        self._items, self._make = items, make

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):  # type: ignore[no-untyped-def, override]
        return self._make(self._items[index])


def js_json_chunks(obj: Any, indent: int | None = 2, *, depth: int = 2) -> Iterator[str]:
    """``js_json_dumps(obj, indent)`` in pieces: the same text, never held whole.

    The outer ``depth`` levels of containers are laid out here, one member at a time;
    deeper values are encoded whole.  A large result (thousands of turn rows) is written
    row by row, so the runner's peak memory does not grow with the document.
    """
    gap = " " * indent if indent else ""
    enc = _encoder(gap, True, None)

    def walk(value: Any, current: str, level: int) -> Iterator[str]:
        if level >= depth or not isinstance(value, Mapping | list | tuple | MadeOnDemand) or not value:
            yield enc(list(value) if isinstance(value, MadeOnDemand) else value, current)
            return
        inner = current + gap
        if isinstance(value, Mapping):
            keys = [str(k) for k in value]
            if len(set(keys)) != len(keys):
                raise ValueError("mapping has keys that collide as strings")
            lookup = {str(k): v for k, v in value.items()}
            colon = ": " if gap else ":"
            members = [(_quote(k) + colon, lookup[k]) for k in _js_key_order(keys)]
            open_, close = "{", "}"
        else:
            members = (("", v) for v in value)  # type: ignore[assignment]
            open_, close = "[", "]"
        yield open_ + ("\n" + inner if gap else "")
        for i, (prefix, member) in enumerate(members):
            if i:
                yield ",\n" + inner if gap else ","
            yield prefix
            yield from walk(member, inner, level + 1)
        yield ("\n" + current if gap else "") + close

    return walk(obj, "", 0)


def _encoder(gap: str, js_key_order: bool, default: Callable[[Any], Any] | None) -> Callable[[Any, str], str]:
    """The JSON.stringify encoder of one value at an indentation level (``current``)."""

    def enc(value: Any, current: str) -> str:
        if value is None or value is True or value is False:
            return "null" if value is None else ("true" if value else "false")
        if isinstance(value, str):
            return _quote(value)
        if isinstance(value, int | float):
            if isinstance(value, float) and not math.isfinite(value):
                return "null"
            return js_number(value)
        if isinstance(value, Mapping):
            keys = [str(k) for k in value]
            if len(set(keys)) != len(keys):
                raise ValueError("mapping has keys that collide as strings")
            lookup = {str(k): v for k, v in value.items()}
            order = _js_key_order(keys) if js_key_order else keys
            if not order:
                return "{}"
            inner = current + gap
            colon = ": " if gap else ":"
            parts = [_quote(k) + colon + enc(lookup[k], inner) for k in order]
            return _join("{", "}", parts, current, inner)
        if isinstance(value, list | tuple):
            if not value:
                return "[]"
            inner = current + gap
            return _join("[", "]", [enc(v, inner) for v in value], current, inner)
        if default is not None:
            return enc(default(value), current)
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")

    def _join(open_: str, close: str, parts: list[str], current: str, inner: str) -> str:
        if not gap:
            return open_ + ",".join(parts) + close
        return open_ + "\n" + inner + (",\n" + inner).join(parts) + "\n" + current + close

    return enc


def stringify(obj: Any, indent: int | None = None) -> str:
    """``JSON.stringify(obj)`` (compact) or ``JSON.stringify(obj, null, indent)``."""
    if indent is None and _plain(obj):
        # The C encoder writes such a value byte for byte as JSON.stringify does (every hook
        # call's payload is one), several times faster than the emulation.
        return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return js_json_dumps(obj, indent)


# Integers below this print alike in JS and Python; from here on a double rounds them.
_SAFE_INTEGER = 2**53


def _plain(value: Any) -> bool:
    """Whether ``json.dumps`` writes ``value`` exactly as JSON.stringify does: no number a JS double
    prints otherwise (floats; integers from 2**53), no key a JS object would move (an array index
    goes first) or no string key at all, no surrogate (escaped by JS, written raw by Python)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if holds_surrogate(item):
                return False
        elif isinstance(item, int):  # bool too: true/false either way
            if not -_SAFE_INTEGER < item < _SAFE_INTEGER:
                return False
        elif isinstance(item, dict):
            for key in item:
                if not isinstance(key, str) or key[:1].isdigit() or holds_surrogate(key):
                    return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif item is not None:
            return False  # floats, tuples, mappings of other types: the emulation decides
    return True


# parseFloat / parseInt read the longest numeric prefix after leading (JS) whitespace.
_FLOAT_PREFIX = re.compile(r"[+-]?(?:Infinity|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)")
_INT_PREFIX = re.compile(r"[+-]?[0-9]+")
_JS_SPACE = "\t\n\x0b\x0c\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
            "\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_parse_float(text: str) -> float:
    """``parseFloat(text)`` (NaN when no number starts the text)."""
    m = _FLOAT_PREFIX.match(text.lstrip(_JS_SPACE))
    if m is None:
        return math.nan
    token = m.group()
    return float(token.replace("Infinity", "inf"))


def js_parse_int(text: str) -> float | int:
    """``parseInt(text, 10)``: an int while exact, else the nearest double (NaN when no digits)."""
    m = _INT_PREFIX.match(text.lstrip(_JS_SPACE))
    if m is None:
        return math.nan
    value = float(m.group())
    return int(m.group()) if abs(value) <= 2**53 else value


def json_parse_number(literal: str) -> int | float:
    """A JSON number literal as ``JSON.parse`` reads it: the nearest double (ids beyond 2**53
    round), an integral one kept as an int while that is exact (``1.0`` is 1).

    For ``json.loads(parse_int=..., parse_float=...)``.
    """
    value = float(literal)
    if math.isfinite(value) and value.is_integer() and abs(value) <= 2**53:
        return int(value)
    return value
