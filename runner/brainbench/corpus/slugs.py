"""Page slugs as gbrain stores them (its ``validateSlug`` on import; issue 13 rule 4).

A seed page's slug is lower-cased, or refused: a refused slug is a seed failure
for its fixture (reported, the fixture skipped, exit 2), never a corpus error,
because gbrain loads such a corpus and fails at seeding.  Gold and fact subjects
that name a seeded page are compared in the stored (normalised) spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from brainbench.models.corpus import Fixture, Gold

# C0, DEL and C1: Unicode's Cc.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Bidi embeddings/overrides (LRE RLE PDF LRO RLO) and isolates (LRI RLI FSI PDI).
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_ENCODED_SEPARATOR = re.compile(r"%(?:2e|2f|5c)", re.IGNORECASE)


class SlugError(ValueError):
    """gbrain would refuse to store a page under this slug."""


def validate_slug(slug: str) -> str:
    """The slug gbrain stores for ``slug`` (lower-cased), or ``SlugError`` saying why not."""
    if not slug:
        raise SlugError("slug is empty")
    if slug.startswith("/"):
        raise SlugError("slug starts with '/'")
    for segment in slug.split("/"):
        if segment in ("", ".", ".."):
            raise SlugError(f"slug has an {'empty' if not segment else repr(segment)} path segment")
    if "\\" in slug:
        raise SlugError("slug contains a backslash")
    if _ENCODED_SEPARATOR.search(slug):
        raise SlugError("slug contains a percent-encoded '.', '/' or '\\' (%2e, %2f, %5c)")
    if m := _CONTROL.search(slug):
        raise SlugError(f"slug contains the control character U+{ord(m.group()):04X}")
    if m := _BIDI.search(slug):
        raise SlugError(f"slug contains the bidirectional override/isolate U+{ord(m.group()):04X}")
    return slug.lower()


def stored_slug(slug: str) -> str | None:
    """The normalised slug, or None when gbrain would refuse it."""
    try:
        return validate_slug(slug)
    except SlugError:
        return None


def seeded_slugs(fixtures: Iterable[Fixture]) -> set[str]:
    """Normalised slugs of every seed page the fixtures would store."""
    out = set()
    for fx in fixtures:
        for page in fx.seed_pages or []:
            norm = stored_slug(page.slug)
            if norm is not None:
                out.add(norm)
    return out


def _ref(slug: str, pages: set[str]) -> str:
    norm = stored_slug(slug)
    return norm if norm is not None and norm in pages else slug


def _refs(slugs: list[str] | None, pages: set[str]) -> list[str] | None:
    return None if slugs is None else [_ref(s, pages) for s in slugs]


def normalise_page_refs(fixture: Fixture, gold: Gold, pages: set[str]) -> tuple[Fixture, Gold]:
    """Fixture and gold with every slug that names one of ``pages`` in its stored spelling.

    ``pages`` are the normalised slugs seeded into the same brain (the fixture's
    own, plus its continuity partner's).  A slug naming no seeded page is left
    as written.
    """
    if not pages:
        return fixture, gold
    facts = fixture.seed_facts
    if facts:
        fixture = fixture.model_copy(update={"seed_facts": [
            f if f.entity_slug is None else f.model_copy(update={"entity_slug": _ref(f.entity_slug, pages)})
            for f in facts
        ]})
    turns = {}
    for key, tg in gold.turns.items():
        update: dict[str, object] = {
            "gold_slugs": _refs(tg.gold_slugs, pages),
            "acceptable_slugs": _refs(tg.acceptable_slugs, pages),
        }
        if tg.gold_facts is not None:
            update["gold_facts"] = [
                gf if gf.entity_slug is None else gf.model_copy(update={"entity_slug": _ref(gf.entity_slug, pages)})
                for gf in tg.gold_facts
            ]
        turns[key] = tg.model_copy(update=update)
    update_gold: dict[str, object] = {"turns": turns}
    if gold.continuity is not None:
        update_gold["continuity"] = gold.continuity.model_copy(update={"decisions": [
            d.model_copy(update={"expected_slugs": [_ref(s, pages) for s in d.expected_slugs]})
            for d in gold.continuity.decisions
        ]})
    return fixture, gold.model_copy(update=update_gold)
