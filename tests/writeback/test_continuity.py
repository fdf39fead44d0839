"""Mirrors gbrain's test/brainbench-continuity.test.ts for the scoring side (spec §7)."""

from __future__ import annotations

from datetime import UTC, datetime

from brainbench.brain.seeding import seed_fixture
from brainbench.brain.store import ensure_sources, insert_fact
from brainbench.writeback.continuity import aggregate_continuity, score_continuity
from brainbench.writeback.extractors import GoldExtractor
from brainbench.writeback.pipeline import run_write_back

from ._helpers import make_loaded


def _reader(decisions: list[dict], active_source: str | None = None):
    fixture = {"fixture_id": "pair-x-reader", "suites": ["continuity"],
               "continuity": {"pair_id": "pair-x", "pair_role": "reader"},
               "turns": [{"turn_id": 1, "role": "user", "text": "Where did we land?"}]}
    if active_source:
        fixture["active_source"] = active_source
    gold = {"turns": {"1": {"should_retrieve": False}},
            "continuity": {"pair_id": "pair-x", "decisions": decisions}}
    return make_loaded(fixture, gold)


def test_cont001_after_write_back(brain, reference_corpus) -> None:
    pair = reference_corpus.pairs["cont-001"]
    seed_fixture(brain, pair.writer.fixture)
    seed_fixture(brain, pair.reader.fixture)
    run_write_back(brain, pair.writer, GoldExtractor(pair.writer))
    by_slug = score_continuity(brain, pair.reader, {"companies/widget-co"})
    by_probe = score_continuity(brain, pair.reader, set())
    for score in (by_slug, by_probe):
        assert (score.pair_id, score.gold_total, score.gold_failed, score.hits) == ("cont-001", 1, 0, {"d1": True})
    assert aggregate_continuity([by_slug, by_probe]).continuity_rate() == 1.0


def test_cont001_without_write_back_misses(brain, reference_corpus) -> None:
    pair = reference_corpus.pairs["cont-001"]
    seed_fixture(brain, pair.writer.fixture)
    score = score_continuity(brain, pair.reader, {"people/someone-else"})
    assert (score.gold_failed, score.failed_items) == (1, ["cont-001/d1"])


def test_keyword_probe_and_semantics_and_expired_facts(brain) -> None:
    reader = _reader([{"decision_id": "d1", "expected_slugs": ["companies/acme"],
                       "match_keywords": ["pass", "Acme"]}])
    insert_fact(brain, "default", fact="We will pass on it", source="t")
    insert_fact(brain, "default", fact="acme raised a round", source="t")
    assert score_continuity(brain, reader, set()).gold_failed == 1  # no single fact has both keywords
    insert_fact(brain, "default", fact="We PASS on ACME for now", source="t",
                expired_at=datetime(2026, 1, 1, tzinfo=UTC))
    assert score_continuity(brain, reader, set()).gold_failed == 1  # the only match is expired
    insert_fact(brain, "default", fact="Decided to pass on acme", source="t")
    assert score_continuity(brain, reader, set()).hits == {"d1": True}


def test_probe_only_reads_the_readers_active_source(brain) -> None:
    ensure_sources(brain, ["teambrain"])
    insert_fact(brain, "teambrain", fact="pass on acme", source="t")
    decision = {"decision_id": "d1", "expected_slugs": [], "match_keywords": ["pass", "acme"]}
    assert score_continuity(brain, _reader([decision]), set()).gold_failed == 1
    assert score_continuity(brain, _reader([decision], active_source="teambrain"), set()).gold_failed == 0


def test_like_wildcards_in_keywords_are_literal(brain) -> None:
    insert_fact(brain, "default", fact="margin at 50 percent", source="t")
    decision = {"decision_id": "d1", "expected_slugs": [], "match_keywords": ["50%"]}
    assert score_continuity(brain, _reader([decision]), set()).gold_failed == 1


def test_unrecallable_decision(brain) -> None:
    insert_fact(brain, "default", fact="pass on acme", source="t")
    reader = _reader([
        {"decision_id": "d-ok", "expected_slugs": ["companies/acme"], "match_keywords": ["pass"]},
        {"decision_id": "d-missing", "expected_slugs": ["companies/nowhere"], "match_keywords": ["unicorn"]},
    ])
    score = score_continuity(brain, reader, {"companies/acme"})
    assert (score.gold_total, score.gold_failed) == (2, 1)
    assert score.hits == {"d-ok": True, "d-missing": False}
    assert score.failed_items == ["pair-x/d-missing"]
    agg = aggregate_continuity([score])
    assert (agg.gold_total, agg.gold_failed, agg.continuity_rate()) == (2, 1, 0.5)
    assert aggregate_continuity([]).continuity_rate() == 1.0


def test_empty_keywords_and_no_slug_hit_is_a_miss(brain) -> None:
    insert_fact(brain, "default", fact="anything", source="t")
    reader = _reader([{"decision_id": "d1", "expected_slugs": ["companies/acme"], "match_keywords": []}])
    assert score_continuity(brain, reader, set()).gold_failed == 1
