"""ECMAScript string semantics (issue 13 rules 1–2): whitespace, trim, split, UTF-16 length and slice."""

from __future__ import annotations

import json
import re

import pytest
import regex
from brainbench.jsjson import stringify
from brainbench.jsstring import NOT_WS, WHITESPACE, WS, is_space, js_len, js_slice, split_ws, trim, trim_end, utf8_bytes
from hypothesis import given, settings
from hypothesis import strategies as st

# ECMAScript WhiteSpace ∪ LineTerminator, written out by code point.
JS_SPACE = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, *range(0x2000, 0x200B),
            0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF]
# Python (or Unicode White_Space) calls these space; JS does not.  Plus near neighbours.
NOT_JS_SPACE = [0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0x180E, 0x200B, 0x200C, 0x200D, 0x2060, 0x00, 0x08, 0x0E, 0x7F]


def test_the_set_is_exactly_ecmascripts() -> None:
    assert {ord(c) for c in WHITESPACE} == set(JS_SPACE)
    for cp in range(0x10000):
        ch = chr(cp)
        assert is_space(ch) == (cp in JS_SPACE)
        assert bool(re.fullmatch(WS, ch)) == (cp in JS_SPACE), hex(cp)
        assert bool(regex.fullmatch(WS, ch)) == (cp in JS_SPACE), hex(cp)
        assert bool(re.fullmatch(NOT_WS, ch)) == (cp not in JS_SPACE), hex(cp)


@pytest.mark.parametrize("cp", JS_SPACE)
def test_trim_removes_each_js_space_on_each_side(cp: int) -> None:
    ch = chr(cp)
    assert trim(f"{ch}a{ch}b{ch}") == f"a{ch}b"
    assert trim_end(f"{ch}a{ch}") == f"{ch}a"
    assert split_ws(f"a{ch}b") == ["a", "b"]
    assert split_ws(f"{ch}a{ch}{ch}b{ch}") == ["", "a", "b", ""]


@pytest.mark.parametrize("cp", NOT_JS_SPACE)
def test_trim_keeps_what_only_python_calls_space(cp: int) -> None:
    ch = chr(cp)
    assert trim(f"{ch}a{ch}") == f"{ch}a{ch}"
    assert split_ws(f"a{ch}b") == [f"a{ch}b"]
    if ch.isspace():  # the very difference the module exists for
        assert f"{ch}a{ch}".strip() == "a"


def test_split_of_empty_and_all_space_is_js() -> None:
    assert split_ws("") == [""]  # "".split(/\s+/) → [""]
    assert split_ws(" \ufeff ") == ["", ""]


def test_length_counts_utf16_units() -> None:
    assert js_len("") == 0
    assert js_len("abc") == 3
    assert js_len("é") == 1
    assert js_len("😀") == 2
    assert js_len("a😀b") == 4
    assert js_len("\ud83d") == 1  # a lone half counts one unit


def test_slice_may_cut_a_surrogate_pair_like_js() -> None:
    text = "ab😀cd"  # units: a b D83D DE00 c d
    assert js_slice(text, 0, 3) == "ab\ud83d"
    assert js_slice(text, 3) == "\ude00cd"
    assert js_slice(text, 0, 4) == "ab😀"
    assert js_slice(text, -2) == "cd"
    assert js_slice(text, 4, 2) == ""
    # Two halves put back together are the character again, once read as UTF-16.
    assert js_slice(js_slice(text, 0, 3) + js_slice(text, 3), 0) == text


def test_a_lone_surrogate_leaves_as_json_stringify_writes_it() -> None:
    cut = js_slice("x😀", 0, 2)
    # JSON.stringify("x\ud83d") === '"x\\ud83d"' (well-formed stringify, ES2019).
    assert stringify({"t": cut}) == '{"t":"x\\ud83d"}'
    assert json.loads(stringify({"t": cut}))["t"] == cut
    assert stringify({"t": cut}).encode() == b'{"t":"x\\ud83d"}'


def test_utf8_bytes_writes_a_lone_surrogate_as_replacement_character() -> None:
    assert utf8_bytes("a😀") == "a😀".encode()
    assert utf8_bytes("a\ud83d") == b"a\xef\xbf\xbd"  # Buffer.byteLength('a\ud83d') === 4


def test_without_lone_surrogates_copies_and_replaces_every_half() -> None:
    from brainbench.jsstring import without_lone_surrogates

    doc = {"a\ud800": ["x\udc00y", {"k": "ok \U0001f600", "n": 1}], "t": True}
    out = without_lone_surrogates(doc)
    assert out == {"a\ufffd": ["x\ufffdy", {"k": "ok \U0001f600", "n": 1}], "t": True}
    assert doc["a\ud800"][0] == "x\udc00y"  # the input is not mutated
    deep: list[object] = ["\ud83d"]
    for _ in range(5000):  # deeper than the recursion limit
        deep = [deep]
    flat = without_lone_surrogates(deep)
    for _ in range(5000):
        flat = flat[0]
    assert flat == ["\ufffd"]


def test_without_lone_surrogates_hands_back_a_clean_value_itself() -> None:
    from brainbench.jsstring import without_lone_surrogates

    doc = {"prompt": "ok \U0001f600 é", "messages": [{"role": "user", "content": "x"}], "n": 1}
    assert without_lone_surrogates(doc) is doc  # nothing to replace: no copy made
    assert without_lone_surrogates({"k": ["a", {"\udc00": 1}]}) == {"k": ["a", {"\ufffd": 1}]}


_JSON_TEXT = st.text(st.characters(codec=None) | st.sampled_from("\ud800\udfff\u2028\x00\x7f\"\\é😀"), max_size=8)
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.floats(allow_nan=True) | _JSON_TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner)
    | st.dictionaries(_JSON_TEXT | st.from_regex(r"[0-9]{1,3}", fullmatch=True), inner, max_size=4),
    max_leaves=12)


@given(_JSON_VALUES)
@settings(max_examples=2000, deadline=None)
def test_stringify_writes_every_value_as_the_emulation_does(value: object) -> None:
    """The C encoder's shortcut (plain values) and the JSON.stringify emulation agree byte for byte."""
    from brainbench.jsjson import js_json_dumps

    assert stringify(value) == js_json_dumps(value, None)
