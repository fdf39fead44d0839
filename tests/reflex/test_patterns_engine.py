"""The reflex's patterns run on the standard library's ``re`` (faster to compile and to match);
they were written for, and are checked against, the ``regex`` module: the same matches on text
made of every kind of character they classify (JS's letter classes, JS whitespace, marks, CJK)."""

from __future__ import annotations

import random
import re

import pytest
import regex
from brainbench.jscase import LETTER, LOWER, NUMBER, UPPER
from brainbench.jsstring import WHITESPACE
from brainbench.reflex import candidates, resolve


def _members(cls: str) -> list[str]:
    """The characters of a class written as ranges (``a-z`` and lone characters)."""
    out: list[str] = []
    i = 0
    while i < len(cls):
        if i + 2 < len(cls) and cls[i + 1] == "-":
            out += [chr(c) for c in range(ord(cls[i]), ord(cls[i + 2]) + 1)]
            i += 3
        else:
            out.append(cls[i])
            i += 1
    return out


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    found = [(f"{module.__name__}.{name}", value) for module in (candidates, resolve)
             for name, value in vars(module).items() if isinstance(value, re.Pattern)]
    assert any(name.endswith("_CAP_RUN") for name, _ in found) and any(name.endswith("_WEAK") for name, _ in found)
    return found


def _alphabet() -> list[str]:
    rng = random.Random(7)
    classes = [_members(c) for c in (LETTER, UPPER, LOWER, NUMBER)]
    picked = [ch for members in classes for ch in rng.sample(members, min(60, len(members)))]
    ws = sorted(WHITESPACE)
    return picked + ws * 3 + list("AZaz09'’-.@_!?:;•([\"“ ") * 4 + ["\u4e00", "\u3042", "\u30a2", "\uac00", "ſ", "İ",
                                                                    "\U0001d400", "\ud800"]


@pytest.mark.parametrize("name,pattern", _patterns(), ids=lambda v: v if isinstance(v, str) else "")
def test_re_matches_what_the_regex_module_matches(name: str, pattern: re.Pattern[str]) -> None:
    twin = regex.compile(pattern.pattern, pattern.flags & ~re.UNICODE)
    rng = random.Random(name)
    alphabet = _alphabet()
    for _ in range(1500):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        ours = [(m.span(), m.groups()) for m in pattern.finditer(text)]
        theirs = [(m.span(), m.groups()) for m in twin.finditer(text)]
        assert ours == theirs, (name, text)
