"""JS number formatting, Math.round and JSON.stringify emulation."""

from __future__ import annotations

import json
import math

import pytest
from brainbench.jsjson import js_json_dumps, js_math_round, js_number, js_sorted, round4
from hypothesis import given
from hypothesis import strategies as st


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (1, "1"),
        (0.9063, "0.9063"),
        (38.2752, "38.2752"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e20, "100000000000000000000"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (123456789.125, "123456789.125"),
        (0.000001, "0.000001"),
        (0.0000015, "0.0000015"),
        (1e-7, "1e-7"),
        (1.25e-7, "1.25e-7"),
        (-2.5, "-2.5"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (2**53 + 1, "9007199254740992"),  # ints are doubles in JS
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (float("-inf"), "-Infinity"),
    ],
)
def test_js_number(value: float, text: str) -> None:
    assert js_number(value) == text


def test_js_number_rejects_bool() -> None:
    with pytest.raises(TypeError):
        js_number(True)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_round_trips(x: float) -> None:
    assert float(js_number(x)) == x


@pytest.mark.parametrize(
    ("value", "rounded"),
    [
        (0.123456789, 0.1235),
        (87 / 96, 0.9063),
        (53 / 96, 0.5521),
        (5703 / 149, 38.2752),
        (904 / 12, 75.3333),
        (0.00005, 0.0001),  # half-up, where Python's round() goes to even
        (0.00025, 0.0003),  # 2.5 exactly: half-up (Python's round gives 0.0002)
        (0.00015, 0.0001),  # the float product is 1.4999999999999998, as in JS
        (-0.00005, 0.0),  # ties go toward +infinity, not away from zero
        (1.0, 1.0),
        (0.0, 0.0),
    ],
)
def test_round4_is_js_math_round(value: float, rounded: float) -> None:
    assert round4(value) == rounded


def test_math_round_exact_ties() -> None:
    assert js_math_round(2.5) == 3
    assert js_math_round(-2.5) == -2
    assert js_math_round(0.49999999999999994) == 0  # floor(x + 0.5) would give 1
    assert math.isnan(js_math_round(float("nan")))


def test_stringify_layout_matches_json_stringify() -> None:
    doc = {"schema_version": 1, "a": [], "b": {}, "c": [1, 2.0, {"d": None, "e": True}], "f": 0.9063}
    assert js_json_dumps(doc) == (
        '{\n  "schema_version": 1,\n  "a": [],\n  "b": {},\n  "c": [\n    1,\n    2,\n    {\n'
        '      "d": null,\n      "e": true\n    }\n  ],\n  "f": 0.9063\n}'
    )
    assert js_json_dumps(doc, None) == '{"schema_version":1,"a":[],"b":{},"c":[1,2,{"d":null,"e":true}],"f":0.9063}'


def test_stringify_strings() -> None:
    # Non-ASCII raw, U+2028 raw, C0 controls escaped in lowercase hex, lone surrogates escaped.
    assert js_json_dumps("é\u2028\x7f\"\\\n\t\x01\b\f\r") == '"é\u2028\x7f\\"\\\\\\n\\t\\u0001\\b\\f\\r"'
    assert js_json_dumps("\ud800") == '"\\ud800"'
    assert js_json_dumps("😀") == '"😀"'


def _spec_quote(text: str) -> str:
    """JSON.stringify's QuoteJSONString (ES2019), code unit by code unit: the oracle."""
    short = {"\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", '"': '\\"', "\\": "\\\\"}
    out = []
    for ch in text:
        if ch in short:
            out.append(short[ch])
        elif ord(ch) < 0x20 or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


@given(st.text(alphabet=st.characters(exclude_categories=())))  # surrogates included
def test_stringify_strings_match_the_spec_algorithm(text: str) -> None:
    assert js_json_dumps(text) == _spec_quote(text)


def test_stringify_nonfinite_is_null() -> None:
    assert js_json_dumps([float("nan"), float("inf")], None) == "[null,null]"


def test_stringify_integer_keys_first_like_js_objects() -> None:
    doc = {"b": 1, "10": 2, "2": 3, "01": 4, "a": 5}
    assert js_json_dumps(doc, None) == '{"2":3,"10":2,"b":1,"01":4,"a":5}'
    assert js_json_dumps(doc, None, js_key_order=False) == '{"b":1,"10":2,"2":3,"01":4,"a":5}'


@given(
    st.recursive(
        st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(),
        lambda children: st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet="abcxyz_", min_size=1), children, max_size=4),
        max_leaves=20,
    )
)
def test_stringify_agrees_with_json_dumps_without_floats(doc: object) -> None:
    # Python's json module and JSON.stringify agree on layout for ints/strings/containers.
    try:
        expected = json.dumps(doc, indent=2, ensure_ascii=False)
    except UnicodeEncodeError:  # pragma: no cover
        return
    if any(0xD800 <= ord(c) <= 0xDFFF for c in expected):
        return  # lone surrogates: covered above
    assert js_json_dumps(doc) == expected.replace("\x7f", "\x7f")


def test_stringify_parses_back() -> None:
    doc = {"x": [0.1, 1e-7, 1e21, -0.0, 3], "y": "ü"}
    assert json.loads(js_json_dumps(doc)) == {"x": [0.1, 1e-7, 1e21, 0, 3], "y": "ü"}


def test_js_sorted_is_utf16_order() -> None:
    # U+FF5E (BMP) sorts after U+1F600 (astral, high surrogate D83D) in JS.
    assert js_sorted(["\uff5e", "\U0001f600", "b", "a", "a"]) == ["a", "a", "b", "\U0001f600", "\uff5e"]


def test_chunks_are_the_same_text_at_every_depth() -> None:
    from brainbench.jsjson import js_json_chunks

    docs = [{"b": [1, {"c": []}], "2": {}, "a": [[], {"d": "é\u2028"}]}, [], {}, [1, [2, {}]], "x", 0.5]
    for doc in docs:
        for indent in (2, None):
            for depth in (0, 1, 2, 5):
                assert "".join(js_json_chunks(doc, indent, depth=depth)) == js_json_dumps(doc, indent)


def test_arrays_made_on_demand_are_the_same_text_made_one_at_a_time() -> None:
    from brainbench.jsjson import MadeOnDemand, js_json_chunks

    rows = [{"a": 1.0}, {"b": [0.5, "é\u2028"]}, {}]
    made: list[object] = []

    def make(row: dict[str, object]) -> dict[str, object]:
        made.append(row)
        return row

    expected = js_json_dumps({"x": rows, "y": []}, 2)
    for depth in (1, 2, 5):
        doc = {"x": MadeOnDemand(rows, make), "y": MadeOnDemand([], make)}
        assert "".join(js_json_chunks(doc, 2, depth=depth)) == expected
    # Written member by member, a member is made only when its turn comes.
    made.clear()
    chunks = js_json_chunks({"x": MadeOnDemand(rows, make)}, 2)
    while "1" not in next(chunks):
        pass
    assert made == rows[:1]
