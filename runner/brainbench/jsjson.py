"""JSON exactly as JavaScript's ``JSON.stringify`` writes it.

gbrain hashes pages and serializes baselines with ``JSON.stringify``; byte
equality with its files needs JS number formatting (``1`` not ``1.0``,
``1e-7`` not ``1e-07``) and its escaping, which ``json.dumps`` does not give.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any


def js_number(value: float | int) -> str:
    """Format a number like JS ``Number.prototype.toString`` (ECMA-262 Number::toString)."""
    if isinstance(value, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(value, int):
        value = float(value) if abs(value) >= 2**53 else value
        if isinstance(value, int):
            return str(value)
    if math.isnan(value) or math.isinf(value):
        return "null"  # what JSON.stringify writes for NaN/Infinity
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    # repr gives the shortest round-trip digits; re-lay them out by JS rules.
    digits_tuple = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digits_tuple.digits)).rstrip("0") or "0"
    exponent = digits_tuple.exponent + len(digits_tuple.digits)  # position of the decimal point
    k = len(digits)
    n = int(exponent)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    exp = n - 1
    mantissa = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp)}"


def _string(value: str) -> str:
    # json.dumps without ASCII escaping matches JSON.stringify for well-formed text.
    return json.dumps(value, ensure_ascii=False)


def stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)``; dict key order is preserved."""
    return _encode(value, indent, 0)


def _encode(value: Any, indent: int | None, depth: int) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, dict):
        items = [(_string(str(k)), _encode(v, indent, depth + 1)) for k, v in value.items()]
        if not items:
            return "{}"
        if indent is None:
            return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        return "{\n" + ",\n".join(f"{inner}{k}: {v}" for k, v in items) + "\n" + pad + "}"
    if isinstance(value, list | tuple):
        parts = [_encode(v, indent, depth + 1) for v in value]
        if not parts:
            return "[]"
        if indent is None:
            return "[" + ",".join(parts) + "]"
        pad, inner = " " * (indent * depth), " " * (indent * (depth + 1))
        return "[\n" + ",\n".join(inner + p for p in parts) + "\n" + pad + "]"
    raise TypeError(f"cannot serialize {type(value).__name__}")
