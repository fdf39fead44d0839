"""The reflex's JS string rules (issue 13 rules 1–2): whitespace at every boundary, UTF-16 lengths, the clip."""

from __future__ import annotations

import psycopg
import pytest
from brainbench.brain.aliases import normalize_alias
from brainbench.brain.store import import_page
from brainbench.harnesses.injected import estimate_tokens
from brainbench.hooks.program import context_output
from brainbench.reflex.candidates import extract_candidates, is_at_sentence_start
from brainbench.reflex.render import render_pointer_block
from brainbench.reflex.resolve import clip, resolve_pointers

JS_SPACE = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0xA0, 0x1680, *range(0x2000, 0x200B),
            0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF]
NOT_JS_SPACE = [0x1C, 0x1D, 0x1E, 0x1F, 0x85, 0x180E, 0x200B, 0x2060]
ALL = [(cp, True) for cp in JS_SPACE] + [(cp, False) for cp in NOT_JS_SPACE]


def queries(text: str) -> list[tuple[str, bool]]:
    return [(c.query, c.weak) for c in extract_candidates(text)]


@pytest.mark.parametrize(("cp", "space"), ALL, ids=[f"U+{cp:04X}" for cp, _ in ALL])
def test_a_capitalised_run_spans_exactly_js_whitespace(cp: int, space: bool) -> None:
    ch = chr(cp)
    got = queries(f"we met Odile{ch}Brackwater today")
    strong = [q for q, weak in got if not weak]
    if space:
        assert strong == [f"Odile{ch}Brackwater"]  # one two-token run, as in JS
    else:
        assert strong == ["Odile", "Brackwater"]  # two runs


@pytest.mark.parametrize(("cp", "space"), ALL, ids=[f"U+{cp:04X}" for cp, _ in ALL])
def test_the_leading_stopword_split_uses_js_whitespace(cp: int, space: bool) -> None:
    ch = chr(cp)
    got = queries(f"so Did{ch}Galewright call")
    # The run "Did<sp>Galewright" exists only when the separator is JS whitespace.
    assert ((f"Did{ch}Galewright", False) in got) == space
    assert ("Galewright", False) in got


@pytest.mark.parametrize(("cp", "space"), ALL, ids=[f"U+{cp:04X}" for cp, _ in ALL])
def test_sentence_start_skips_exactly_js_whitespace(cp: int, space: bool) -> None:
    ch = chr(cp)
    text = f"wow.{ch}Good"
    assert is_at_sentence_start(text, text.index("Good")) == space
    # "Good" is a common word: dropped at a sentence start, kept mid-sentence.
    assert (("Good", False) in queries(text)) == (not space)


@pytest.mark.parametrize(("cp", "space"), ALL, ids=[f"U+{cp:04X}" for cp, _ in ALL])
def test_alias_normalisation_folds_exactly_js_whitespace(cp: int, space: bool) -> None:
    ch = chr(cp)
    norm = normalize_alias(f"{ch}Odile{ch}{ch}Brackwater{ch}")
    if space:
        assert norm == "odile brackwater"
    else:
        assert norm == f"{ch}odile{ch}{ch}brackwater{ch}".lower()


def test_candidate_lengths_are_utf16_units() -> None:
    # U+1D401 MATHEMATICAL BOLD CAPITAL B is one code point but two JS units.
    assert ("B", False) not in queries("we met B today")  # length 1 < 2: dropped
    assert ("\U0001d401", False) in queries("we met \U0001d401 today")  # length 2: kept
    # Weak pass: "ab's" strips to "ab" (2 < 3); "a𝐚's" strips to 3 units.
    assert ("ab", True) not in queries("ask ab's view")
    assert ("a\U0001d41a", True) in queries("ask a\U0001d41a's view")


def test_the_clip_counts_units_and_may_cut_a_pair() -> None:
    smile = "\U0001f600"
    assert clip("a" * 158 + smile, 160) == "a" * 158 + smile  # exactly 160 units: untouched
    assert clip("a" * 159 + smile, 160) == "a" * 159 + "…"  # 161 units (Python len says 160)
    assert clip("a" * 158 + smile + "zz", 160) == "a" * 158 + "\ud83d…"  # the pair is cut in half
    assert clip("a" * 157 + smile + "zz", 160) == "a" * 157 + smile + "…"


def test_the_clip_trims_only_js_whitespace() -> None:
    assert clip("a" * 150 + "\x85" * 20, 160) == "a" * 150 + "\x85" * 9 + "…"
    assert clip("a" * 150 + "\ufeff" * 20, 160) == "a" * 150 + "…"


def test_token_estimate_is_utf16_and_takes_lone_halves() -> None:
    assert estimate_tokens("\U0001f600" * 3) == 2  # 6 units
    assert estimate_tokens("ab\ud83d") == 1  # 3 units
    assert estimate_tokens("a" * 8 + "\ud83d") == 3  # 9 units


def _person(title: str, summary: str) -> str:
    return f"---\ntitle: {title}\ntype: person\nsummary: {summary}\n---\n\n{title}.\n"


def test_surname_arm_minimum_is_three_units(brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    assert import_page(conn, "people/wen-ok", _person("Wen O\U0001d424", "Engineer."), "default")[0] == "imported"
    assert import_page(conn, "people/li-xu", _person("Li Xu", "Designer."), "default")[0] == "imported"
    # "O𝐤" is 2 code points but 3 units: the surname arm runs, as in JS.
    found = resolve_pointers(conn, "default", extract_candidates("any news from O\U0001d424 lately"))
    assert [(p.slug, p.arm) for p in found] == [("people/wen-ok", "title-surname")]
    # "Xu" is 2 units: no surname arm.
    assert resolve_pointers(conn, "default", extract_candidates("any news from Xu lately")) == []
    assert resolve_pointers(conn, "default", extract_candidates("any news from Li Xu lately")) != []


def test_a_cut_pair_reaches_the_wire_as_json_stringify_writes_it(brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    summary = "a" * 158 + "\U0001f600" + "zz"
    assert import_page(conn, "people/odile-vane", _person("Odile Vane", summary), "default")[0] == "imported"
    [pointer] = resolve_pointers(conn, "default", extract_candidates("we met Odile Vane"))
    assert pointer.synopsis == "a" * 158 + "\ud83d…"
    block = render_pointer_block([pointer])
    out = context_output("UserPromptSubmit", block)
    assert "\\ud83d…" in out
    assert out.encode("utf-8")  # valid UTF-8: the half is escaped, never written raw
    units = len(block.encode("utf-16-le", "surrogatepass")) // 2
    assert estimate_tokens(block) == -(-units // 4)
