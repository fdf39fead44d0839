"""JSON from outside the runner, parsed with bounded depth and size.

Python's ``json`` and pydantic's parser both recurse per nesting level: a few KB of ``[``
(well under every output cap) raise ``RecursionError``, which no ``except ValueError``
catches, so one hook's answer ended the whole run as an internal error.  Every parse of
bytes that a hook, seed, call server, sidecar or image label sends goes through
:func:`loads`, which measures the nesting *before* parsing and refuses what is too deep
or too large with a :class:`json.JSONDecodeError` — the error every parse site already
turns into that sender's fault (``contract_violation``, a stream protocol violation, a
one-line label error).
"""

from __future__ import annotations

import json
import re
from typing import Any

# Real hook answers nest 3 levels, stream lines 4, seed labels 3; 64 leaves room for any
# honest extension and stays far below the parsers' own limits (pydantic stops at 200).
MAX_DEPTH = 64
# Above every per-channel cap (1 MiB output, 4 MiB stdin, 1 MiB prompt inside a stream line).
MAX_CHARS = 16 * 1024 * 1024

# A complete JSON string (the unrolled form: linear, no backtracking); brackets inside
# strings do not nest.
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JSONTooDeep(json.JSONDecodeError):
    """Nested deeper than the bound: refused before any parser recursed."""


class JSONTooLarge(json.JSONDecodeError):
    """Longer than the bound: refused before parsing."""


def _text(data: str | bytes | bytearray) -> str:
    if isinstance(data, str):
        return data
    return bytes(data).decode("utf-8")  # what json.loads would do (UnicodeDecodeError is a ValueError)


def nesting_depth(text: str, stop_above: int | None = None) -> int:
    """The deepest ``[``/``{`` nesting outside strings (an unterminated string counts its
    brackets, which only over-states a depth that is invalid JSON anyway)."""
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text)) if ("[" in text or "{" in text) else ""
    if stop_above is not None and len(brackets) <= stop_above:
        return 0 if not brackets else min(len(brackets), stop_above)  # cannot exceed the bound
    depth = deepest = 0
    for ch in brackets:
        if ch in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if stop_above is not None and deepest > stop_above:
                    return deepest
        else:
            depth = max(depth - 1, 0)
    return deepest


def check(text: str, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> None:
    """Raise :class:`JSONTooLarge` / :class:`JSONTooDeep` for text the parsers must not see."""
    if len(text) > max_chars:
        raise JSONTooLarge(f"JSON of {len(text)} characters; the bound is {max_chars}", text[:0], 0)
    if nesting_depth(text, stop_above=max_depth) > max_depth:
        raise JSONTooDeep(f"JSON nested deeper than {max_depth} levels", text[:0], 0)


def loads(data: str | bytes | bytearray, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS,
          **kwargs: Any) -> Any:
    """``json.loads`` of untrusted text; every refusal is a ``json.JSONDecodeError`` (a ``ValueError``)."""
    text = _text(data)
    check(text, max_depth=max_depth, max_chars=max_chars)
    try:
        return json.loads(text, **kwargs)
    except RecursionError as exc:  # a caller's tiny stack: still the sender's fault, never ours
        raise JSONTooDeep("JSON nested too deep to parse", text[:0], 0) from exc
