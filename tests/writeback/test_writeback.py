"""Mirrors gbrain's test/brainbench-writeback.test.ts plus byte-exact checks against its reference brain."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest
from brainbench.brain.seeding import SeedError, seed_fixture
from brainbench.brain.store import import_page
from brainbench.jsdate import JSDate
from brainbench.models.writeback import SegmentInput, WriteBackAggregate
from brainbench.writeback.extractors import GoldExtractor
from brainbench.writeback.page import conversation_slug, render_conversation_page, render_time
from brainbench.writeback.parse import parse_messages
from brainbench.writeback.pipeline import WriteBackError, receipt_slug, run_write_back
from brainbench.writeback.score import TERMINAL_AUDIT_SOURCE, aggregate_write_back
from brainbench.writeback.segment import render_segment, split_into_segments

from ._helpers import fact_rows, make_loaded, page_row, reference_brain

LINE = re.compile(r"^\*\*(You|Assistant)\*\* \(\d{4}-\d{2}-\d{2} \d{1,2}:\d{2} (AM|PM)\): ")
# The instant gbrain's reference run wrote the wb-001 receipt (run id ecf-mx2fmikm-defa).
WB001_NOW = datetime(2026, 11, 29, 22, 50, 4, 294000, tzinfo=UTC)
CONT001_NOW = datetime(2026, 11, 29, 22, 49, 15, 309000, tzinfo=UTC)
REFERENCE_FACT_KEYS = (
    "source_id", "entity_slug", "fact", "kind", "visibility", "notability", "context", "source", "source_session",
    "source_markdown_slug", "row_num", "confidence", "valid_from", "expired_at",
)


# --- rendering, parsing, segmentation -----------------------------------------------------


def test_rendered_page_lines_parse_to_one_message_per_turn(reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    content = render_conversation_page(wb.fixture)
    assert content.startswith("---\ntitle: Bench conversation wb-001-pricing-concern\ntype: conversation\n---\n\n")
    assert content.endswith("\n")
    body = content.split("---\n\n", 1)[1].rstrip("\n").split("\n")
    assert len(body) == len(wb.fixture.turns)
    assert all(LINE.match(line) for line in body)
    messages = parse_messages("\n".join(body))
    assert [m.speaker for m in messages] == ["You", "Assistant", "You", "You"]
    assert [m.text for m in messages] == [t.text for t in wb.fixture.turns]
    # 17:00:30 renders as 5:00 PM and parses back to the minute.
    assert messages[1].iso == "2026-03-02T17:00:00Z"


@pytest.mark.parametrize(
    ("instant", "rendered"),
    [
        (datetime(2026, 1, 5, 0, 7, 59, tzinfo=UTC), "2026-01-05 12:07 AM"),
        (datetime(2026, 1, 5, 9, 0, tzinfo=UTC), "2026-01-05 9:00 AM"),
        (datetime(2026, 1, 5, 12, 30, tzinfo=UTC), "2026-01-05 12:30 PM"),
        (datetime(2026, 1, 5, 23, 59, tzinfo=UTC), "2026-01-05 11:59 PM"),
    ],
)
def test_time_rendering_round_trips(instant: datetime, rendered: str) -> None:
    assert render_time(JSDate(instant.timestamp() * 1000)) == rendered
    message = parse_messages(f"**You** ({rendered}): hi")[0]
    assert message.iso == instant.replace(second=0).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert message.time == instant.replace(second=0).timestamp() * 1000


def test_continuation_lines_join_the_previous_message() -> None:
    messages = parse_messages("preamble\n**You** (2026-01-05 9:00 AM): one\ntwo\n**Bot** (2026-01-05 9:01 AM): x")
    assert [(m.speaker, m.text) for m in messages] == [("You", "one\ntwo"), ("Bot", "x")]


def _messages(minutes: list[int]) -> list:
    lines = [f"**{'You' if i % 2 == 0 else 'Assistant'}** (2026-01-05 {9 + m // 60}:{m % 60:02d} AM): m{i}"
             for i, m in enumerate(minutes)]
    return parse_messages("\n".join(lines))


def test_gap_must_be_strictly_over_30_minutes() -> None:
    assert len(split_into_segments(_messages([0, 30, 60]))) == 1
    segments = split_into_segments(_messages([0, 1, 32, 33]))
    assert [len(s.messages) for s in segments] == [2, 2]


def test_one_message_segments_are_dropped_and_30_messages_flush() -> None:
    assert [len(s.messages) for s in split_into_segments(_messages([0, 45, 46]))] == [2]
    assert [len(s.messages) for s in split_into_segments(_messages(list(range(31))))] == [30]
    assert [len(s.messages) for s in split_into_segments(_messages(list(range(32))))] == [30, 2]


def test_segment_rendering() -> None:
    segment = split_into_segments(_messages([0, 1, 2]))[0]
    assert render_segment(segment, "Bench conversation x") == (
        "Page: Bench conversation x\n"
        "Conversation between You and Assistant from 2026-01-05T09:00:00Z to 2026-01-05T09:02:00Z\n"
        "---\n"
        "You (2026-01-05T09:00:00Z): m0\nAssistant (2026-01-05T09:01:00Z): m1\nYou (2026-01-05T09:02:00Z): m2"
    )


# --- the gold extractor -------------------------------------------------------------------


def _segment_input(text: str) -> SegmentInput:
    return SegmentInput(text=text, source="default", session_id="s", page_slug="p", page_title="t",
                        start_iso="a", end_iso="b", participants=["You"], message_count=2)


def test_gold_extractor_emits_exactly_the_facts_whose_turn_is_in_the_segment(reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    extractor = GoldExtractor(wb)
    turn3 = wb.fixture.turns[2].text
    facts = extractor.extract(_segment_input(f"Page: x\n---\nYou (2026-03-02T17:01:00Z): {turn3}"))
    assert [(f.entity_slug, f.kind, f.source) for f in facts] == [("people/alice-example", "belief", "default")]
    assert facts[0].fact == wb.gold.turns["3"].gold_facts[0].fact
    assert extractor.extract(_segment_input("You (2026-03-02T17:01:00Z): something unrelated")) == []


# --- the pipeline against a real brain, byte-exact with gbrain's reference ----------------


def _assert_matches_reference(brain, loaded, now: datetime) -> None:
    ref = reference_brain(loaded.fixture_id)["after_write_back"]
    seed_fixture(brain, loaded.fixture)
    score = run_write_back(brain, loaded, GoldExtractor(loaded), now=now)

    expected = ref["score"]
    for key in ("gold_total", "gold_failed", "survived", "provenance_ok", "stored_rows", "matched_any_gold",
                "failed_items"):
        assert getattr(score, key) == expected[key], key
    assert score.metrics() == expected["metrics"]

    slug = conversation_slug(loaded.fixture_id)
    ref_pages = {p["slug"]: p for p in ref["pages"]}
    assert page_row(brain, slug) == ref_pages[slug]

    receipt = next(p for p in ref["pages"] if p["type"] == "extract_receipt")
    assert score.receipt_slug == receipt["slug"] == receipt_slug(now, "default")
    mine = page_row(brain, receipt["slug"])
    assert mine is not None
    # The receipt's content_hash covers gbrain's pre-jsonb key order, which its dump cannot show.
    for key in ("type", "title", "frontmatter", "compiled_truth"):
        assert mine[key] == receipt[key], key

    rows = fact_rows(brain)
    assert [r["id"] for r in rows] == [f["id"] for f in ref["facts"]]
    for mine_row, ref_row in zip(rows, ref["facts"], strict=True):
        for key in REFERENCE_FACT_KEYS:
            if key == "valid_from" and ref_row["source"] == TERMINAL_AUDIT_SOURCE:
                continue  # gbrain read the clock a few ms before the receipt's timestamp
            assert mine_row[key] == ref_row[key], (ref_row["row_num"], key)
    terminal = rows[-1]
    assert terminal["valid_from"].startswith(now.strftime("%Y-%m-%d %H:%M:%S"))
    rollup = brain.execute("SELECT run_id, source_id, kind, total_rows FROM extract_rollups").fetchall()
    assert rollup == [(receipt["frontmatter"]["run_id"], "default", "facts.conversation", score.facts_inserted)]


def test_wb001_matches_gbrain_reference(brain, reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    _assert_matches_reference(brain, wb, WB001_NOW)


def test_cont001_writer_matches_gbrain_reference(brain, reference_corpus) -> None:
    writer = reference_corpus.by_id()["cont-001-widget-pass-writer"]
    _assert_matches_reference(brain, writer, CONT001_NOW)


def test_wb001_score_and_provenance(brain, reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    score = run_write_back(brain, wb, GoldExtractor(wb))
    assert (score.gold_total, score.gold_failed, score.segments, score.facts_inserted) == (3, 0, 1, 3)
    assert score.metrics() == {"write_back_fidelity": 1.0, "provenance_accuracy": 1.0}
    slug = conversation_slug(wb.fixture_id)
    stored = [r for r in fact_rows(brain) if r["source"] == "cli:extract-conversation-facts"]
    assert len(stored) >= 2
    assert {r["source_session"] for r in stored} == {f"cli:extract-conversation-facts:{slug}"}


def test_doctored_keyword_loses_one_gold_fact(brain, reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    gold = wb.gold.model_dump(mode="json", exclude_none=True)
    gold["turns"]["3"]["gold_facts"][0]["match_keywords"] = ["pricing", "burn multiple"]
    doctored = make_loaded(wb.fixture.model_dump(mode="json", exclude_none=True), gold)
    seed_fixture(brain, doctored.fixture)
    score = run_write_back(brain, doctored, GoldExtractor(doctored))
    assert (score.gold_total, score.gold_failed, score.survived) == (3, 1, 2)
    assert score.metrics()["write_back_fidelity"] == pytest.approx(2 / 3)
    assert score.failed_items == ["wb-001-pricing-concern#3: gold fact lost: pricing concern"]
    # matched_any_gold counts rows matching some gold item's keywords; the doctored one matches none.
    assert (score.stored_rows, score.matched_any_gold) == (3, 2)


def test_wrong_entity_is_lost_and_wrong_provenance_fails(brain, reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    run_write_back(brain, wb, GoldExtractor(wb))
    slug = conversation_slug(wb.fixture_id)
    brain.execute("UPDATE facts SET entity_slug = 'people/bob' WHERE row_num = 0 AND source_markdown_slug = %s",
                  (slug,))
    brain.execute("UPDATE facts SET source_session = 'elsewhere' WHERE row_num = 1 AND source_markdown_slug = %s",
                  (slug,))
    from brainbench.writeback.score import score_write_back

    score = score_write_back(brain, wb)
    assert (score.gold_total, score.survived, score.provenance_ok, score.gold_failed) == (3, 2, 1, 2)
    assert score.failed_items[0] == "wb-001-pricing-concern#3: gold fact lost: pricing concern"
    assert score.failed_items[1].startswith("wb-001-pricing-concern#4: wrong provenance: checklist commitment")


GAP_FIXTURE = {
    "fixture_id": "wb-gap-45",
    "suites": ["write-back"],
    "seed_pages": [{"slug": "people/dana-lee", "content": "---\ntitle: Dana Lee\ntype: person\n---\n\nDana.\n"}],
    "turns": [
        {"turn_id": 1, "role": "user", "ts": "2026-04-01T09:00:00Z", "text": "Met Dana Lee for coffee."},
        {"turn_id": 2, "role": "assistant", "ts": "2026-04-01T09:01:00Z", "text": "How did it go?"},
        {"turn_id": 3, "role": "user", "ts": "2026-04-01T09:46:00Z", "text": "Dana prefers async updates."},
        {"turn_id": 4, "role": "user", "ts": "2026-04-01T09:47:00Z", "text": "Dana closed the Series A."},
        {"turn_id": 5, "role": "user", "ts": "2026-04-01T10:32:00Z", "text": "Dana wants the deck by Monday."},
    ],
}
GAP_GOLD = {
    "turns": {
        "3": {"should_retrieve": False, "gold_facts": [
            {"gist": "async", "fact": "Dana Lee prefers async updates", "entity_slug": "people/dana-lee",
             "match_keywords": ["async"], "kind": "preference"}]},
        "4": {"should_retrieve": False, "gold_facts": [
            {"gist": "series a", "fact": "Dana Lee closed the Series A", "entity_slug": "people/dana-lee",
             "match_keywords": ["Series A"], "kind": "event"}]},
        "5": {"should_retrieve": False, "gold_facts": [
            {"gist": "deck", "fact": "Dana Lee wants the deck by Monday", "entity_slug": "people/dana-lee",
             "match_keywords": ["deck"], "kind": "commitment"}]},
    }
}


def test_45_minute_gaps_split_segments_and_lone_messages_lose_their_facts(brain) -> None:
    loaded = make_loaded(GAP_FIXTURE, GAP_GOLD)
    seed_fixture(brain, loaded.fixture)
    score = run_write_back(brain, loaded, GoldExtractor(loaded))
    # [t1 t2] | 45 min | [t3 t4] | 45 min | [t5] → the last, 1-message segment is dropped.
    assert score.segments == 2
    assert (score.gold_total, score.gold_failed, score.survived) == (3, 1, 2)
    assert score.failed_items == ["wb-gap-45#5: gold fact lost: deck"]
    rows = [r for r in fact_rows(brain) if r["source"] == "cli:extract-conversation-facts"]
    slug = "conversations/bench-wb-gap-45"
    assert [(r["row_num"], r["fact"]) for r in rows] == [
        (0, "Dana Lee prefers async updates"), (1, "Dana Lee closed the Series A")]
    assert {r["context"] for r in rows} == {f"from {slug} segment 2026-04-01T09:46:00Z..2026-04-01T09:47:00Z"}
    assert {r["valid_from"] for r in rows} == {"2026-04-01 09:46:00+00"}
    terminal = fact_rows(brain)[-1]
    assert (terminal["fact"], terminal["row_num"], terminal["notability"]) == ("EXTRACTION_COMPLETE", 2, "low")


def test_gen_wb_shape_two_segments_full_fidelity(brain) -> None:
    fixture = {**GAP_FIXTURE, "fixture_id": "wb-gen-shape", "turns": GAP_FIXTURE["turns"][:4]}
    gold = {"turns": {k: v for k, v in GAP_GOLD["turns"].items() if k != "5"}}
    loaded = make_loaded(fixture, gold)
    seed_fixture(brain, loaded.fixture)
    score = run_write_back(brain, loaded, GoldExtractor(loaded))
    assert (score.segments, score.gold_total, score.gold_failed) == (2, 2, 0)
    assert score.metrics() == {"write_back_fidelity": 1.0, "provenance_accuracy": 1.0}


def test_no_facts_means_terminal_row_but_no_receipt(brain) -> None:
    loaded = make_loaded({**GAP_FIXTURE, "fixture_id": "wb-nothing"}, {"turns": {}})
    seed_fixture(brain, loaded.fixture)
    score = run_write_back(brain, loaded, GoldExtractor(loaded))
    assert (score.gold_total, score.facts_inserted, score.receipt_slug) == (0, 0, None)
    assert score.metrics() == {"write_back_fidelity": 1.0, "provenance_accuracy": 1.0}
    assert [r["fact"] for r in fact_rows(brain)] == ["EXTRACTION_COMPLETE"]
    assert brain.execute("SELECT count(*) FROM pages WHERE type = 'extract_receipt'").fetchone() == (0,)


def test_page_not_imported_fails_the_run(brain, reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    slug = conversation_slug(wb.fixture_id)
    # Byte-identical content already present → import status "skipped" (spec §2.3) → SeedError.
    assert import_page(brain, slug, render_conversation_page(wb.fixture), "default")[0] == "imported"
    with pytest.raises(WriteBackError, match="skipped") as info:
        run_write_back(brain, wb, GoldExtractor(wb))
    assert isinstance(info.value, SeedError)


def test_facts_land_in_the_active_source(brain) -> None:
    fixture = {**GAP_FIXTURE, "fixture_id": "wb-team", "active_source": "teambrain", "turns": GAP_FIXTURE["turns"][:4]}
    loaded = make_loaded(fixture, {"turns": {"3": GAP_GOLD["turns"]["3"]}})
    seed_fixture(brain, loaded.fixture)
    score = run_write_back(brain, loaded, GoldExtractor(loaded), now=WB001_NOW)
    assert (score.source_id, score.gold_failed) == ("teambrain", 0)
    assert fact_rows(brain, "default") == []
    assert score.receipt_slug == "extracts/2026-11-29/facts.conversation/teambrain/ecf-mx2f/round-full"
    assert page_row(brain, score.receipt_slug, "teambrain")["title"] == "facts.conversation — full — teambrain"


def test_aggregation_sums_fixtures(brain, reference_corpus) -> None:
    wb = reference_corpus.by_id()["wb-001-pricing-concern"]
    seed_fixture(brain, wb.fixture)
    first = run_write_back(brain, wb, GoldExtractor(wb))
    lost = first.model_copy(update={"fixture_id": "x", "survived": 0, "provenance_ok": 0, "gold_failed": 3,
                                    "matched_any_gold": 0})
    agg = aggregate_write_back([first, lost])
    assert isinstance(agg, WriteBackAggregate)
    assert (agg.fixtures, agg.gold_total, agg.gold_failed) == (["wb-001-pricing-concern", "x"], 6, 3)
    assert agg.metrics(llm=True) == {"write_back_fidelity": 0.5, "provenance_accuracy": 1.0,
                                     "extraction_recall": 0.5, "extraction_precision": 0.5}
    assert WriteBackAggregate.of([]).metrics(llm=True) == {
        "write_back_fidelity": 1.0, "provenance_accuracy": 1.0, "extraction_recall": 1.0, "extraction_precision": 1.0}
