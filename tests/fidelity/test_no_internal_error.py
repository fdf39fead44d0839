"""No fixture, however odd its text, makes BrainBench fail internally (issue 30).

The worst a fixture may cause is what gbrain reports: a corpus error (one line, exit 2) or
a per-fixture seed failure.  Hypothesis feeds the text paths odd strings -- astral CJK,
lone surrogate escapes, YAML specials, JS line terminators -- and each property names the
only exceptions it allows.  Examples are kept few on the database-backed property.
"""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest
from brainbench.brain.aliases import normalize_alias, normalize_alias_list
from brainbench.brain.markdown import PageParseError, parse_page
from brainbench.brain.seeding import SeedError, seed_fixture
from brainbench.brain.store import PageRow
from brainbench.corpus.errors import CorpusError
from brainbench.corpus.loader import LoadedFixture, load_corpus
from brainbench.corpus.slugs import SlugError, validate_slug
from brainbench.corpus.timestamps import parse_ts
from brainbench.jsjson import stringify
from brainbench.jsstring import utf8_bytes
from brainbench.models.corpus import Fixture, Gold
from brainbench.reflex.candidates import extract_candidates, extract_candidates_from_window
from brainbench.reflex.render import render_pointer_block
from brainbench.reflex.resolve import resolve_pointers, synopsis
from brainbench.writeback.extractors import GoldExtractor
from brainbench.writeback.parse import parse_messages
from brainbench.writeback.pipeline import WriteBackError, run_write_back
from brainbench.writeback.segment import render_segment, split_into_segments
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Pieces that have each broken a reader once: YAML syntax and values, JS-only whitespace and
# line terminators, astral and BMP CJK, case-table outliers, escapes that make lone halves.
TOKENS = [
    "---", "\n", "\r\n", "\r", "\t", " ", ": ", ":", "- ", "#", "[", "]", "{", "}", ",", "'", '"', "|", ">", "&a", "*a",
    "!!binary ", "!!int ", "<<", "?", "=", "~", "1e3", "1.", "0x1F", "1:30", "2024-02-30", "2024-01-05T10:00:00Z",
    "yes", "null", "\\ud83d", "\\0", "\\x41", "\u2028", "\u2029", "\x85", "\ufeff", "\xa0", "\u3000", "\x00", "\x07",
    "田中", "𠀀", "𪚥", "㐀", "김", "ｶ", "田中𠀀𠀁𠀂さん", "𠀀中", "Σ", "ΑΣ", "İ", "Ꟍ", "ß", "😀", "\U00010d50",
    "**You** (2024-01-05 9:00 AM): ",
    "## 2024-01-06", "<!--- gbrain:takes:begin -->", "<!--- gbrain:facts:end -->", "| # | claim | kind |",
    "# Title", "```", "title", "type", "tags", "aliases", "summary", "Alice Example", "people/", "Orion",
]
odd_text = st.one_of(
    st.text(max_size=80),
    st.lists(st.sampled_from(TOKENS), max_size=24).map("".join),
    st.lists(st.one_of(st.sampled_from(TOKENS), st.text(max_size=4)), max_size=16).map("".join),
)
page_content = st.one_of(
    odd_text,
    st.tuples(st.lists(st.sampled_from(TOKENS), max_size=20).map("".join), odd_text).map(
        lambda p: f"---\n{p[0]}\n---\n{p[1]}"),
    st.tuples(st.sampled_from(["title", "tags", "aliases", "summary", "note", "1", "<<"]), odd_text, odd_text).map(
        lambda p: f"---\n{p[0]}: {p[1]}\n---\n{p[2]}"),
)


@settings(max_examples=300, deadline=None)
@given(slug=odd_text, content=page_content)
def test_a_page_is_read_or_refused(slug: str, content: str) -> None:
    try:
        page = parse_page(validate_slug(slug or "x"), content)
    except (SlugError, PageParseError):
        return
    # What reaches the resolver, the hash and the database is always encodable.
    utf8_bytes(stringify([page.title, page.type, page.compiled_truth, page.timeline, page.stored_json]))
    normalize_alias_list(page.frontmatter.get("aliases"))
    synopsis(PageRow(page.slug, "default", page.type, page.title, page.compiled_truth,
                     json.loads(page.stored_json), page.content_hash))


@settings(max_examples=300, deadline=None)
@given(text=odd_text, other=odd_text)
def test_text_paths_never_raise(text: str, other: str) -> None:
    for candidate in extract_candidates(text):
        # A candidate reaches SQL, so it must be valid UTF-8: never half a surrogate pair
        # (the generated texts hold none, as the loader turns lone escapes into U+FFFD).
        candidate.query.encode("utf-8")
        normalize_alias(candidate.query).encode("utf-8")
    extract_candidates_from_window([("user", text), ("assistant", other)])
    parse_ts(text)
    messages = parse_messages(f"**You** (2024-01-05 9:00 AM): {text}\n{other}\n**Bot** (2024-01-05 9:01 AM): x")
    for segment in split_into_segments(messages):
        render_segment(segment, other)
    synopsis(PageRow("s", "default", "concept", other, text, {"summary": other}, "h"))


@settings(max_examples=60, deadline=None)
@given(turn_id=st.sampled_from(["1", "1.0", "1e21", "9007199254740993", "1e400", "-0", "1.5", "2e-1"]),
       text=st.text(max_size=30), escape=st.sampled_from(["", "\\ud83d", "\\udc00x", "\\u0000"]))
def test_a_corpus_is_loaded_or_refused_in_one_piece(tmp_path_factory: pytest.TempPathFactory, turn_id: str,
                                                    text: str, escape: str) -> None:
    root = tmp_path_factory.mktemp("load")
    (root / "f").mkdir()
    (root / "g").mkdir()
    body = json.dumps(text + "?")[1:-1] + escape
    (root / "f" / "x.fixture.json").write_text(
        '{"schema_version": 1, "fixture_id": "x", "suites": ["know-to-ask"],'
        f' "turns": [{{"turn_id": {turn_id}, "role": "user", "text": "{body}", "ts": "{body}"}}]}}')
    (root / "g" / "x.gold.json").write_text('{"fixture_id": "x", "turns": {}}')
    try:
        load_corpus(root / "f", root / "g")
    except CorpusError:
        pass


def _fixture(pages: list[str], turns: list[str]) -> Fixture:
    return Fixture.model_validate({
        "schema_version": 1, "fixture_id": "fuzz", "suites": ["know-to-ask", "write-back"],
        "seed_pages": [{"slug": f"people/p{i}", "content": c or "x"} for i, c in enumerate(pages)],
        "turns": [{"turn_id": i + 1, "role": "user" if i % 2 == 0 else "assistant", "text": t or "x",
                   "ts": f"2024-01-05T10:{i:02d}:00Z"} for i, t in enumerate(turns)],
    })


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pages=st.lists(page_content, min_size=1, max_size=3), turns=st.lists(odd_text, min_size=1, max_size=4))
def test_seeding_resolving_and_write_back_on_a_real_brain(brain: tuple[psycopg.Connection, str],
                                                          pages: list[str], turns: list[str]) -> None:
    conn, _ = brain
    conn.execute("TRUNCATE pages, page_aliases, facts CASCADE")  # and the memory tables that point at them
    fixture = _fixture(pages, turns)
    try:
        seed_fixture(conn, fixture)
    except SeedError:
        return  # a per-fixture seed failure, as gbrain reports it
    prior = ""
    for text in turns:
        pointers = resolve_pointers(conn, "default", extract_candidates(text), prior_context=prior)
        block = render_pointer_block(pointers)
        utf8_bytes(stringify(block))
        prior += f"\n{text}\n{block}"
    gold = Gold.model_validate({"fixture_id": "fuzz", "turns": {"1": {"should_retrieve": False, "gold_facts": [
        {"gist": "g", "fact": "f", "entity_slug": None, "match_keywords": [turns[0] or "x"]}]}}})
    loaded = LoadedFixture(fixture, gold, Path("fuzz"), Path("fuzz"))
    try:
        run_write_back(conn, loaded, GoldExtractor(loaded))
    except WriteBackError:
        pass
