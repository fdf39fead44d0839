"""The imessage-slack anchor is a JS regex: its \\s, \\d, "." and $ keep their JS meanings."""

from __future__ import annotations

from brainbench.writeback.parse import parse_messages

FIRST = "**You** (2026-01-01 9:05 AM): hello"


def _texts(second: str) -> list[str]:
    return [m.text for m in parse_messages(f"{FIRST}\n{second}")]


def test_js_whitespace_separates_and_python_only_space_does_not() -> None:
    assert _texts("**Bot**\ufeff(2026-01-01\u30009:06 AM):\u2028hi") == ["hello", "hi"]
    assert _texts("**Bot**\x85(2026-01-01 9:06 AM): hi") == ["hello\n**Bot**\x85(2026-01-01 9:06 AM): hi"]


def test_digits_are_ascii() -> None:
    arabic = "**Bot** (٢٠٢٦-01-01 9:06 AM): hi"
    assert _texts(arabic) == [f"hello\n{arabic}"]


def test_dot_stops_at_every_js_line_terminator() -> None:
    for terminator in ("\r", "\u2028", "\u2029"):
        line = f"**Bot** (2026-01-01 9:06 AM): a{terminator}b"
        assert _texts(line) == [f"hello\n{line}"], repr(terminator)
    assert _texts("**Bot** (2026-01-01 9:06 AM): a\x85b") == ["hello", "a\x85b"]
