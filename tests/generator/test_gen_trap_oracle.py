"""Each category's trap, checked against an independent set-level statement of the reflex rules.

``gen_oracle`` re-states spec §3.1/§3.3/§3.5 without budgets or row order. These tests
prove the *design* of every trap (the right arm fires, the right thing stays silent, and
for suppression the entity really resolves so only suppression keeps the turn quiet) for
several seeds. Budget effects need the real seams (``test_gen_traps.py``).
"""

from __future__ import annotations

import pytest
from brainbench.generator import generate_corpus
from brainbench.generator.model import GenFixture
from gen_oracle import brain_pages, extract, replay, resolve

SEEDS = (42, 7, 1234)
ARM_FOR_VARIANT = {"v0-full-name": "title", "v1-company": "title", "v2-first-name": "alias",
                   "v3-lowercase-alias": "alias-weak", "v4-surname": "title-surname"}


def _replayable(corpus_fixtures: tuple[GenFixture, ...]) -> list[tuple[GenFixture, dict]]:
    """Fixture views as replayed: writers are never replayed; readers see their writer's seeds."""
    writers = {f.unit: f for f in corpus_fixtures if f.kind.startswith("writer")}
    out = []
    for f in corpus_fixtures:
        if f.kind.startswith("writer"):
            continue
        fx = f.fixture
        if f.kind.startswith("reader"):
            fx = {**fx, "seed_pages": writers[f.unit].fixture["seed_pages"]}
        out.append((f, fx))
    return out


@pytest.mark.parametrize("seed", SEEDS)
def test_every_gold_turn_behaves_as_labelled(seed: int) -> None:
    for f, fx in _replayable(generate_corpus(seed).fixtures):
        traces = {t.turn_id: t for t in replay(fx)}
        for key, g in f.gold["turns"].items():
            t = traces[int(key)]
            allowed = set(g.get("gold_slugs", [])) | set(g.get("acceptable_slugs", []))
            where = f"{f.fixture_id}#{key} ({f.kind})"
            if g["should_retrieve"]:
                assert set(g["gold_slugs"]) <= set(t.injected) <= allowed, where
                assert set(g["gold_slugs"]) <= set(t.window_injected) <= allowed, where
            else:
                assert t.injected == () and t.window_injected == (), where


@pytest.mark.parametrize("seed", SEEDS)
def test_kta_pos_variants_hit_their_arm(seed: int) -> None:
    for f in generate_corpus(seed).fixtures:
        if f.category != "kta-pos":
            continue
        hits = resolve(brain_pages(f.fixture), extract(f.fixture["turns"][0]["text"]))
        person_or_company = f.gold["turns"]["1"]["gold_slugs"][0]
        assert hits[person_or_company] == ARM_FOR_VARIANT[f.kind], f.fixture_id


@pytest.mark.parametrize("seed", SEEDS)
def test_adversarial_traps_are_real(seed: int) -> None:
    for f in generate_corpus(seed).fixtures:
        if f.category != "adversarial":
            continue
        pages = brain_pages(f.fixture)
        texts = [t["text"] for t in f.fixture["turns"]]
        if f.kind == "suppression":
            # The re-mention resolves on its own; only prior-context suppression silences it.
            assert resolve(pages, extract(texts[2])), f.fixture_id
        elif f.kind == "near-miss":
            cands = extract(texts[0]).strong + extract(texts[2]).strong
            assert cands and not any(resolve(pages, extract(t)) for t in texts), f.fixture_id
        elif f.kind == "ambiguous":
            first = f.fixture["turns"][0]["text"]
            (target,) = f.gold["turns"]["3"]["gold_slugs"]
            alias = next(p.aliases[0] for p in pages if p.slug == target)
            # Two seeded people share the alias, so the alias arm must give up.
            assert sum(alias in p.aliases for p in pages) == 2
            assert alias in first.lower() and not resolve(pages, extract(first)), f.fixture_id


@pytest.mark.parametrize("seed", SEEDS)
def test_kta_neg_has_capitalized_decoys(seed: int) -> None:
    for f in generate_corpus(seed).fixtures:
        if f.category == "kta-neg":
            texts = [t["text"] for t in f.fixture["turns"] if t["role"] == "user"]
            assert all(extract(t).strong for t in texts), f.fixture_id


def test_multi_source_canary_is_only_in_the_other_source() -> None:
    for f in generate_corpus(42).fixtures:
        if f.category != "multi-source":
            continue
        active = {p.slug for p in brain_pages(f.fixture)}
        team_only = {p["slug"] for p in f.fixture["seed_pages"] if p.get("source_id") == "teambrain"} - active
        assert len(team_only) == 1
        everywhere = brain_pages({**f.fixture, "seed_pages": [
            {k: v for k, v in p.items() if k != "source_id"} for p in f.fixture["seed_pages"]]})
        # Were it in the active source, the canary mention WOULD resolve: isolation is the only guard.
        assert team_only <= set(resolve(everywhere, extract(f.fixture["turns"][1]["text"])))
