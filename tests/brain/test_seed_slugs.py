"""Seeding stores slugs as gbrain's validateSlug does (issue 13 rules 4–5), on a real Postgres."""

from __future__ import annotations

import psycopg
import pytest
from brainbench.brain.seeding import SeedError, seed_fixture
from brainbench.models.corpus import Fixture


def _fixture(pages: list[tuple[str, str]]) -> Fixture:
    doc: dict[str, object] = {
        "schema_version": 1, "fixture_id": "slugs", "suites": ["know-to-ask"],
        "seed_pages": [{"slug": s, "content": c} for s, c in pages],
        "turns": [{"turn_id": 1, "role": "user", "text": "hi"}],
    }
    return Fixture.model_validate(doc)


def test_a_mixed_case_slug_is_stored_aliased_and_typed_lower_cased(brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    report = seed_fixture(conn, _fixture(
        [("People/Tamsin-Okonkwo", "---\ntitle: Tamsin Okonkwo\naliases: [tamsin]\n---\n\nAngel.\n")]))
    assert conn.execute("SELECT slug, type FROM pages").fetchall() == [("people/tamsin-okonkwo", "person")]
    assert conn.execute("SELECT alias_norm, slug FROM page_aliases").fetchall() == [
        ("tamsin", "people/tamsin-okonkwo")]
    assert report.slug_sources == {"people/tamsin-okonkwo": {"default"}}


def test_two_spellings_of_one_slug_are_one_page(brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    page = "---\ntitle: Odile\ntype: person\n---\n\nOdile.\n"
    # Identical content under the same stored slug is gbrain's "skipped" import: a seed failure.
    with pytest.raises(SeedError, match="identical content"):
        seed_fixture(conn, _fixture([("people/odile", page), ("People/ODILE", page)]))


@pytest.mark.parametrize("slug", ["/people/x", "people//x", "people/./x", "people/../x", "people\\x",
                                  "people%2Fx", "people/x\x07", "people/x\u202e"])
def test_an_invalid_slug_fails_the_fixture_naming_it(brain: tuple[psycopg.Connection, str], slug: str) -> None:
    conn, _ = brain
    with pytest.raises(SeedError, match="invalid slug"):
        seed_fixture(conn, _fixture([("people/ok", "---\ntitle: Ok\n---\n\nx\n"), (slug, "---\ntitle: X\n---\n\nx\n")]))


@pytest.mark.parametrize("front", ["title: [open", "title: A\ntitle: B", "a: b\n  c: d\n e"])
def test_invalid_yaml_is_a_seed_failure_with_our_message(brain: tuple[psycopg.Connection, str], front: str) -> None:
    conn, _ = brain
    with pytest.raises(SeedError, match="unparsable YAML frontmatter"):
        seed_fixture(conn, _fixture([("concepts/bad", f"---\n{front}\n---\n\nBody.\n")]))
