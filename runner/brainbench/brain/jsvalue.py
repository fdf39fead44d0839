"""Frontmatter values as gbrain's JavaScript holds them, and what it makes of them.

js-yaml hands gbrain JavaScript values: numbers are doubles, timestamps are ``Date``
objects, ``!!binary`` is a Node ``Buffer``.  gbrain then turns them into text three ways,
each with its own rule:

* ``String(value)`` (``js_string``) -- a tag, a type, a mapping key: ``1.0`` → ``1``, a
  date → ``Mon Jan 01 2024 00:00:00 GMT+0000 (…)``, an array → its items comma-joined,
  an object → ``[object Object]``;
* ``JSON.stringify`` (``to_json``) -- the content hash and the stored frontmatter: a date
  → its ISO string, NaN and ±Infinity → null;
* ``{...data}`` (``spread``) -- the frontmatter object itself: a YAML document that is a
  string or a list becomes an object of its indices.

Python values stand in for JS ones: ``int``/``float`` for numbers, ``JSDate``, ``JSBuffer``.
"""

from __future__ import annotations

import math
from typing import Any

from brainbench.jsdate import JSDate
from brainbench.jsjson import js_number

__all__ = ["JSBuffer", "js_string", "spread", "to_json"]


class JSBuffer(bytes):
    """A Node ``Buffer`` (js-yaml's ``!!binary``)."""


def js_string(value: Any, _seen: frozenset[int] = frozenset()) -> str:
    """``String(value)``."""
    if value is None:
        return "null"
    if value is True or value is False:
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, str):
        return value
    if isinstance(value, JSDate):
        return value.to_string()
    if isinstance(value, JSBuffer):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list):
        if id(value) in _seen:  # Array.prototype.join prints a cycle as ''
            return ""
        inner = _seen | {id(value)}
        return ",".join("" if item is None else js_string(item, inner) for item in value)
    return "[object Object]"


def to_json(value: Any) -> Any:
    """The value ``JSON.stringify`` writes, as plain JSON data (dict, list, str, number, bool, None)."""
    if isinstance(value, JSDate):
        return value.to_json()
    if isinstance(value, JSBuffer):
        return {"type": "Buffer", "data": list(value)}
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: to_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_json(v) for v in value]
    return value


def spread(value: Any) -> dict[str, Any]:
    """``{...value}``: an object's own properties; a string's or array's indices; nothing otherwise."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list | JSBuffer):
        return {str(i): item for i, item in enumerate(value)}
    if isinstance(value, str):
        units = value.encode("utf-16-le", "surrogatepass")
        return {str(i): units[2 * i : 2 * i + 2].decode("utf-16-le", "surrogatepass") for i in range(len(units) // 2)}
    return {}
