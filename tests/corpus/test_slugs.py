"""Slugs as gbrain's validateSlug stores them (issue 13 rule 4), and the page references that follow them."""

from __future__ import annotations

import pytest
from brainbench.corpus.slugs import SlugError, normalise_page_refs, seeded_slugs, validate_slug
from brainbench.models.corpus import Fixture, Gold

REJECTED = {
    "empty": "",
    "leading slash": "/people/alice",
    "empty segment": "people//alice",
    "trailing slash": "people/alice/",
    "dot segment": "people/./alice",
    "dot segment alone": ".",
    "dotdot segment": "people/../alice",
    "dotdot first": "../alice",
    "dotdot last": "people/..",
    "backslash": "people\\alice",
    "%2f": "people%2falice",
    "%2F": "people%2Falice",
    "%2e": "people/%2e%2e/alice",
    "%2E": "people/%2Ealice",
    "%5c": "people%5calice",
    "%5C": "people%5Calice",
    "NUL": "people/al\x00ice",
    "TAB (C0)": "people/al\tice",
    "US (C0)": "people/al\x1fice",
    "DEL": "people/al\x7fice",
    "NEL (C1)": "people/al\x85ice",
    "APC (C1)": "people/al\x9fice",
    **{f"bidi U+{cp:04X}": f"people/al{chr(cp)}ice" for cp in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))},
}

ACCEPTED = {
    "people/alice": "people/alice",
    "People/Alice-Example": "people/alice-example",
    "people/ÉLODIE": "people/élodie",
    "people/a.b": "people/a.b",  # a dot inside a segment is fine
    "people/...": "people/...",  # so is a segment of three dots
    "people/%20x": "people/%20x",  # other percent escapes pass
    "people/al\u200eice": "people/al\u200eice",  # LRM is a mark, not an override
    "people/al\xa0ice": "people/al\xa0ice",  # NBSP is not a control
    "concepts/田中": "concepts/田中",
}


@pytest.mark.parametrize("slug", REJECTED.values(), ids=REJECTED.keys())
def test_each_rejection(slug: str) -> None:
    with pytest.raises(SlugError):
        validate_slug(slug)


@pytest.mark.parametrize(("slug", "stored"), ACCEPTED.items())
def test_accepted_slugs_are_lower_cased(slug: str, stored: str) -> None:
    assert validate_slug(slug) == stored


def _fixture(fid: str, slugs: list[str], fact_subject: str | None = None, **extra: object) -> Fixture:
    doc: dict[str, object] = {
        "schema_version": 1, "fixture_id": fid, "suites": ["know-to-ask"],
        "seed_pages": [{"slug": s, "content": "---\ntitle: T\ntype: person\n---\n\nx\n"} for s in slugs],
        "turns": [{"turn_id": 1, "role": "user", "text": "hi"}],
        **extra,
    }
    if fact_subject is not None:
        doc["seed_facts"] = [{"fact": "likes tea", "entity_slug": fact_subject}]
    return Fixture.model_validate(doc)


def test_gold_and_fact_subjects_naming_a_seeded_page_use_the_stored_slug() -> None:
    fixture = _fixture("f", ["People/Alice", "people/bob", "bad//slug"], fact_subject="PEOPLE/ALICE")
    gold = Gold.model_validate({"fixture_id": "f", "turns": {"1": {
        "should_retrieve": True,
        "gold_slugs": ["People/ALICE", "People/Bob", "People/Nobody"],
        "acceptable_slugs": ["BAD//SLUG"],
        "gold_facts": [{"gist": "g", "fact": "likes tea", "entity_slug": "People/Alice",
                        "match_keywords": ["tea"]}],
    }}})
    pages = seeded_slugs([fixture])
    assert pages == {"people/alice", "people/bob"}
    fx, gd = normalise_page_refs(fixture, gold, pages)
    turn = gd.turns["1"]
    # Named pages take the stored spelling; a slug naming no page (or an unstorable one) stays as written.
    assert turn.gold_slugs == ["people/alice", "people/bob", "People/Nobody"]
    assert turn.acceptable_slugs == ["BAD//SLUG"]
    assert turn.gold_facts[0].entity_slug == "people/alice"
    assert fx.seed_facts[0].entity_slug == "people/alice"
    # The original models are untouched (they are frozen and shared).
    assert gold.turns["1"].gold_slugs == ["People/ALICE", "People/Bob", "People/Nobody"]
