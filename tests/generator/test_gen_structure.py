"""Category counts, holdout, timing and per-category shape (spec §12.4, §6, §13)."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import pytest
from brainbench.generator import DEFAULT_COUNTS, generate_corpus
from brainbench.generator.categories.multisource import canary_token
from gen_helpers import FIXTURES, load_json

CORPUS = generate_corpus(42)
CLASSIC_FIXTURES = {"kta-pos": 25, "kta-neg": 15, "push": 20, "write-back": 20, "continuity": 30,
                    "multi-source": 10, "adversarial": 15}
# The memory-trust categories (trust spec §6.3) follow the classic ones in our default mode.
TRUST_FIXTURES = {"trust": 8, "state-resolution": 8, "poisoning-external": 10, "poisoning-agent": 10,
                  "deletion": 6}
EXPECTED_FIXTURES = {**CLASSIC_FIXTURES, **TRUST_FIXTURES}


def _ts(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def test_category_counts() -> None:
    assert Counter(f.category for f in CORPUS.fixtures) == EXPECTED_FIXTURES
    assert Counter(f.fixture["category"] for f in CORPUS.fixtures) == EXPECTED_FIXTURES
    assert DEFAULT_COUNTS["continuity"] * 2 == EXPECTED_FIXTURES["continuity"]
    classic = generate_corpus(42, trust="off")
    assert Counter(f.category for f in classic.fixtures) == CLASSIC_FIXTURES


def test_ids_are_prefixed_and_unique() -> None:
    ids = [f.fixture_id for f in CORPUS.fixtures]
    assert len(set(ids)) == len(ids)
    assert all(i.startswith("gen-") for i in ids)


def test_holdout_fraction_and_pairs_move_together() -> None:
    held = [f for f in CORPUS.fixtures if f.fixture.get("holdout")]
    assert 0.10 < len(held) / len(CORPUS.fixtures) < 0.25
    assert {f.category for f in held} == set(EXPECTED_FIXTURES), "holdout is stratified by category"
    pairs: dict[str, set[bool]] = {}
    for f in CORPUS.fixtures:
        if f.category == "continuity":
            pairs.setdefault(f.unit, set()).add(bool(f.fixture.get("holdout")))
    assert pairs and all(len(v) == 1 for v in pairs.values())
    for f in held:
        assert list(f.fixture)[-1] == "holdout"


def test_fixture_key_order() -> None:
    order = ["schema_version", "fixture_id", "suites", "category", "sources", "active_source", "seed_pages",
             "trust_steps", "turns", "continuity", "holdout"]
    for f in CORPUS.fixtures:
        keys = list(f.fixture)
        assert keys == [k for k in order if k in keys], f.fixture_id
        assert [t["turn_id"] for t in f.fixture["turns"]] == list(range(1, len(keys and f.fixture["turns"]) + 1))


def test_ledger_matches_committed_files(ledger: dict) -> None:
    gen = sorted(FIXTURES.glob("gen-*.fixture.json"))
    assert ledger["generated_fixtures"] == len(gen) == len(CORPUS.fixtures)
    assert ledger["counts"] == EXPECTED_FIXTURES
    assert ledger["holdout"] == sum(bool(load_json(p).get("holdout")) for p in gen)
    gold_turns = sum(len(load_json(FIXTURES.parent / "gold" / p.name.replace(".fixture.", ".gold."))["turns"])
                     for p in gen)
    assert ledger["gold_turns"] == gold_turns
    assert ledger["rebuild"] == f"brainbench corpus generate --seed {ledger['seed']} --project ."
    for key in ("method", "sample", "agreement", "date"):
        assert key in ledger["gold_validation"]


def test_kta_pos_variants() -> None:
    kta = [f for f in CORPUS.fixtures if f.category == "kta-pos"]
    assert Counter(f.kind for f in kta) == {k: 5 for k in
                                            ("v0-full-name", "v1-company", "v2-first-name",
                                             "v3-lowercase-alias", "v4-surname")}
    probes = {f.kind: [] for f in kta}
    for f in kta:
        probes[f.kind].append(f.fixture["turns"][0]["text"])
    # v3 is entirely lowercase: no strong candidate, only the weak-alias arm can fire.
    assert all(t == t.lower() for t in probes["v3-lowercase-alias"])
    for f in kta:
        g = f.gold["turns"]["1"]
        if f.kind == "v0-full-name":
            assert len(g["gold_slugs"]) == 2 and not g["acceptable_slugs"]
        elif f.kind != "v1-company":
            assert g["gold_slugs"][0].startswith("people/") and g["acceptable_slugs"][0].startswith("companies/")
        assert f.gold["turns"]["3"] == {"should_retrieve": False}


def test_kta_pos_template_coverage_over_seeds() -> None:
    for seed in (42, 1, 2, 3):
        texts = [f.fixture["turns"][0]["text"] for f in generate_corpus(seed).fixtures if f.category == "kta-pos"]
        assert any(t.startswith("remind me what") for t in texts)
        assert any(t.startswith("Did ") and "ever follow up" in t for t in texts)


def test_push_turn_names_four_seeded_entities() -> None:
    for f in (f for f in CORPUS.fixtures if f.category == "push"):
        g = f.gold["turns"]["1"]
        assert len(g["gold_slugs"]) == 3 and len(g["acceptable_slugs"]) == 1
        assert len({p["slug"] for p in f.fixture["seed_pages"]}) == 4
        assert sorted(s.split("/")[0] for s in g["gold_slugs"]) == ["funds", "people", "people"]


def _segments(turns: list[dict]) -> list[list[dict]]:
    """§6.2 segmentation: split on a gap strictly > 30 min; drop segments of < 2 messages."""
    segs: list[list[dict]] = []
    for t in turns:
        if segs and _ts(t["ts"]) - _ts(segs[-1][-1]["ts"]) <= timedelta(minutes=30) and len(segs[-1]) < 30:
            segs[-1].append(t)
        else:
            segs.append([t])
    return [s for s in segs if len(s) >= 2]


@pytest.mark.parametrize("category", ["write-back", "continuity"])
def test_write_back_timing_and_facts(category: str) -> None:
    for f in (f for f in CORPUS.fixtures if f.category == category):
        fx = f.fixture
        if "write-back" not in fx["suites"]:
            continue
        turns = fx["turns"]
        assert all("ts" in t for t in turns)
        for y in {_ts(t["ts"]).year for t in turns}:
            assert 2024 <= y <= 2026
        segs = _segments(turns)
        kept = {t["turn_id"] for s in segs for t in s}
        expected_segments = 2 if category == "write-back" else 1
        assert len(segs) == expected_segments, f.fixture_id
        facts = [(tid, gf) for tid, g in f.gold["turns"].items() for gf in g.get("gold_facts", [])]
        assert facts
        texts = {str(t["turn_id"]): t["text"] for t in turns}
        for tid, gf in facts:
            assert int(tid) in kept, "a gold fact in a dropped segment would be lost"
            if category == "write-back":
                assert int(tid) in {t["turn_id"] for t in segs[-1]}
            # Only the claim's own turn text may occur in the rendered segment: unique texts.
            assert sum(texts[tid] in other for other in texts.values()) == 1
            for kw in gf["match_keywords"]:
                assert kw.lower() in gf["fact"].lower()
            if category == "write-back":
                assert gf["entity_slug"].startswith("people/")
        kinds = [gf["kind"] for _, gf in facts]
        assert len(kinds) == len(set(kinds))


def test_continuity_pairs() -> None:
    cont = [f for f in CORPUS.fixtures if f.category == "continuity"]
    by_pair: dict[str, dict[str, dict]] = {}
    for f in cont:
        by_pair.setdefault(f.fixture["continuity"]["pair_id"], {})[f.fixture["continuity"]["pair_role"]] = f
    assert len(by_pair) == 15
    for pair_id, members in by_pair.items():
        w, r = members["writer"], members["reader"]
        assert w.fixture_id == f"{pair_id}-writer" and r.fixture_id == f"{pair_id}-reader"
        assert "seed_pages" not in r.fixture and len(r.fixture["turns"]) == 1
        (decision,) = r.gold["continuity"]["decisions"]
        (fact,) = [gf for g in w.gold["turns"].values() for gf in g.get("gold_facts", [])]
        assert fact["kind"] == "commitment" and fact["match_keywords"] == decision["match_keywords"]
        assert decision["expected_slugs"] == [fact["entity_slug"]] == r.gold["turns"]["1"]["gold_slugs"]
    assert Counter(f.kind for f in cont if f.kind.startswith("writer")) == {
        "writer-pass": 5, "writer-lead": 5, "writer-wait": 5}


def test_multi_source_shape() -> None:
    for f in (f for f in CORPUS.fixtures if f.category == "multi-source"):
        fx = f.fixture
        assert fx["sources"] == ["teambrain"] and fx["active_source"] == "default"
        token = canary_token(f.fixture_id)
        default = [p for p in fx["seed_pages"] if p.get("source_id", "default") == "default"]
        team = [p for p in fx["seed_pages"] if p.get("source_id") == "teambrain"]
        twin = f.gold["turns"]["1"]["gold_slugs"][0]
        assert twin in {p["slug"] for p in default} & {p["slug"] for p in team}
        assert all(token not in p["content"] for p in default)
        assert all(token in p["content"] for p in team)
        assert f.gold["turns"]["2"] == {"should_retrieve": False}


def test_adversarial_kinds_and_suites() -> None:
    adv = [f for f in CORPUS.fixtures if f.category == "adversarial"]
    assert Counter(f.kind for f in adv) == {k: 3 for k in
                                            ("suppression", "near-miss", "stale", "injection", "ambiguous")}
    for f in adv:
        push = f.kind in ("stale", "injection")
        assert ("push" in f.fixture["suites"]) == push
        if f.kind == "injection":
            assert any("IGNORE ALL PREVIOUS INSTRUCTIONS" in p["content"] for p in f.fixture["seed_pages"])
        if f.kind == "stale":
            (page,) = [p for p in f.fixture["seed_pages"] if p["slug"] == f.gold["turns"]["1"]["gold_slugs"][0]]
            assert "Status (2024)" in page["content"] and "Status (2026)" in page["content"]
