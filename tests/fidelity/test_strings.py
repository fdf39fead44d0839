"""Rules 5–10 of issue 30 on strings: each input against what gbrain's code returned for it
(tests/data/fidelity30, see its PROVENANCE.md)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import psycopg
import pytest
from brainbench.brain.aliases import normalize_alias
from brainbench.brain.store import fact_keyword_probe, insert_fact, sql_lowered
from brainbench.corpus.errors import CorpusError
from brainbench.corpus.loader import load_corpus
from brainbench.corpus.rules import turn_key
from brainbench.jscase import SQL_LOWER_FROM, SQL_LOWER_TO, js_lower, sql_lower
from brainbench.jsdate import parse
from brainbench.reflex.candidates import extract_candidates
from brainbench.writeback.parse import parse_messages
from brainbench.writeback.segment import render_segment, split_into_segments

from .conftest import paired


def _ids(pairs: list[tuple[Any, Any]]) -> list[str]:
    return [repr(case)[:60] for case, _ in pairs]


JS_LOWER = paired("js_lower")
SQL_LOWER = paired("sql_lower")
ALIASES = paired("normalize_alias")
CANDIDATES = paired("candidates")
CONVERSATIONS = paired("conversations")
NUMBERS = paired("json_numbers")


@pytest.mark.parametrize(("text", "want"), JS_LOWER, ids=_ids(JS_LOWER))
def test_to_lower_case_is_gbrains_engine(text: str, want: str) -> None:
    assert js_lower(text) == want


@pytest.mark.parametrize(("text", "want"), SQL_LOWER, ids=_ids(SQL_LOWER))
def test_sql_lower_is_gbrains_pglite(text: str, want: str) -> None:
    assert sql_lower(text) == want


@pytest.mark.parametrize(("text", "want"), ALIASES, ids=_ids(ALIASES))
def test_normalize_alias(text: str, want: str) -> None:
    assert normalize_alias(text) == want


@pytest.mark.parametrize(("text", "want"), CANDIDATES, ids=_ids(CANDIDATES))
def test_candidates(text: str, want: list[list[Any]]) -> None:
    assert [[c.display, c.query, c.weak] for c in extract_candidates(text)] == want


def test_date_parse_on_every_case() -> None:
    wrong = [(text, want, parse(text)) for text, want in paired("date_parse") if parse(text) != want]
    assert not wrong, f"{len(wrong)} differ, e.g. {wrong[:5]}"


@pytest.mark.parametrize(("body", "want"), CONVERSATIONS, ids=_ids(CONVERSATIONS))
def test_conversation_parsing_and_segment_truncation(body: str, want: dict[str, Any]) -> None:
    messages = parse_messages(body)
    assert [[m.speaker, m.iso, m.text] for m in messages] == want["messages"]
    assert [render_segment(s, "Bench conversation x") for s in split_into_segments(messages)] == want["segments"]


@pytest.mark.parametrize(("literal", "want"), NUMBERS, ids=[c for c, _ in NUMBERS])
def test_turn_ids_as_json_parse_reads_them(tmp_path: Path, literal: str, want: dict[str, Any]) -> None:
    (tmp_path / "f").mkdir()
    (tmp_path / "g").mkdir()
    (tmp_path / "f" / "n.fixture.json").write_text(
        '{"schema_version": 1, "fixture_id": "n", "suites": ["know-to-ask"],'
        f' "turns": [{{"turn_id": {literal}, "role": "user", "text": "hi"}}]}}')
    (tmp_path / "g" / "n.gold.json").write_text(json.dumps(
        {"fixture_id": "n", "turns": {want["key"]: {"should_retrieve": False}}}))
    if not want["integer"]:
        with pytest.raises(CorpusError):
            load_corpus(tmp_path / "f", tmp_path / "g")
        return
    loaded = load_corpus(tmp_path / "f", tmp_path / "g").fixtures[0]
    # The gold written under String(JSON.parse(literal)) joins the turn, as in gbrain.
    assert turn_key(loaded.fixture.turns[0].turn_id) == want["key"]
    assert list(loaded.gold.turns) == [want["key"]]


def test_sql_lower_and_ilike_on_a_real_brain(brain: tuple[psycopg.Connection, str]) -> None:
    """Our SQL (translate() with gbrain's table, on whatever locale this Postgres has) answers as
    gbrain's PGLite did: lower(title) for every case, and the continuity probe's ILIKE."""
    conn, _ = brain
    lowered = "SELECT " + sql_lowered("(%(t)s::text)", "%(f)s", "%(to)s")
    for text, want in SQL_LOWER:
        row = conn.execute("SELECT translate(%s, %s, %s)", (text, SQL_LOWER_FROM, SQL_LOWER_TO)).fetchone()
        assert row is not None and row[0] == want, text
        row = conn.execute(lowered, {"t": text, "f": SQL_LOWER_FROM, "to": SQL_LOWER_TO}).fetchone()
        assert row is not None and row[0] == want, text  # the ASCII fast path or translate(), as the text is
    for (text, keyword), want in paired("ilike"):
        conn.execute("TRUNCATE facts")
        insert_fact(conn, "default", fact=text, source="bench:seed")
        assert fact_keyword_probe(conn, "default", [keyword]) is want, (text, keyword)


def test_the_ascii_fast_path_of_the_sql_lower_case_is_the_table_s(brain: tuple[psycopg.Connection, str]) -> None:
    """``sql_lowered`` lowers an all-ASCII text with lower() under the C collation: every ASCII character,
    alone and in a word, must come out as gbrain's table has it, and a text with one character beyond
    ASCII anywhere must take the table itself."""
    conn, _ = brain
    lowered = "SELECT " + sql_lowered("(%(t)s::text)", "%(f)s", "%(to)s")
    args = {"f": SQL_LOWER_FROM, "to": SQL_LOWER_TO}
    texts = [chr(c) for c in range(1, 128)] + ["".join(chr(c) for c in range(1, 128)), "Ada LOVELACE", ""]
    rng = random.Random(29)
    beyond = [chr(c) for c in range(0x80, 0x2000) if not 0xD800 <= c <= 0xDFFF] + list(SQL_LOWER_FROM)
    for _ in range(300):
        word = [chr(rng.randrange(32, 127)) for _ in range(rng.randrange(1, 12))]
        if rng.random() < 0.5:
            word.insert(rng.randrange(len(word) + 1), rng.choice(beyond))
        texts.append("".join(word))
    for text in texts:
        row = conn.execute(lowered, {"t": text, **args}).fetchone()
        assert row is not None and row[0] == sql_lower(text), repr(text)


@pytest.mark.parametrize("name", ["LU", "LL", "L", "N"])
def test_letter_classes_hold_exactly_their_tables_characters(name: str) -> None:
    # The classes are written as the characters themselves: each range's ends and their neighbours
    # are in the class exactly when the table says so, in both regex engines the code uses.
    import re

    import regex
    from brainbench import jscase
    from brainbench.jscase import tables

    ranges = getattr(tables, name)
    body = {"LU": jscase.UPPER, "LL": jscase.LOWER, "L": jscase.LETTER, "N": jscase.NUMBER}[name]
    probes = {c for a, b in ranges for c in (a - 1, a, b, b + 1) if 0 <= c <= 0x10FFFF and not 0xD800 <= c <= 0xDFFF}
    probes |= {ord(c) for c in "\\]^-[ az"}
    members = {c for c in probes if any(a <= c <= b for a, b in ranges)}
    for engine in (re, regex):
        pattern = engine.compile(f"[{body}]")
        assert {c for c in probes if pattern.fullmatch(chr(c))} == members
