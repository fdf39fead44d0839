"""Slugs as gbrain's validateSlug stores them (issue 13 rule 4); page references stay as written (issue 30)."""

from __future__ import annotations

import pytest
from brainbench.corpus.slugs import SlugError, validate_slug

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


def test_gold_and_fact_subjects_are_read_as_written(tmp_path) -> None:
    """Issue 30 rule 11: gbrain never normalises gold or fact subjects (only the seeded slug)."""
    import json

    from brainbench.corpus.loader import load_corpus

    (tmp_path / "fixtures").mkdir()
    (tmp_path / "gold").mkdir()
    fixture = {
        "schema_version": 1, "fixture_id": "f", "suites": ["know-to-ask"],
        "seed_pages": [{"slug": "People/Alice", "content": "---\ntitle: T\ntype: person\n---\n\nx\n"}],
        "seed_facts": [{"fact": "likes tea", "entity_slug": "PEOPLE/ALICE"}],
        "turns": [{"turn_id": 1, "role": "user", "text": "hi"}],
    }
    gold = {"fixture_id": "f", "turns": {"1": {
        "should_retrieve": True, "gold_slugs": ["People/Alice"], "acceptable_slugs": ["People/ALICE"],
        "gold_facts": [{"gist": "g", "fact": "likes tea", "entity_slug": "People/Alice", "match_keywords": ["tea"]}],
    }}}
    (tmp_path / "fixtures" / "f.fixture.json").write_text(json.dumps(fixture))
    (tmp_path / "gold" / "f.gold.json").write_text(json.dumps(gold))
    loaded = load_corpus(tmp_path / "fixtures", tmp_path / "gold").fixtures[0]
    turn = loaded.gold.turns["1"]
    assert turn.gold_slugs == ["People/Alice"]
    assert turn.acceptable_slugs == ["People/ALICE"]
    assert turn.gold_facts[0].entity_slug == "People/Alice"
    assert loaded.fixture.seed_facts[0].entity_slug == "PEOPLE/ALICE"
