"""The seed contract's document: one fixture's seed data as an image's ``seed`` reads it.

Built with the very parser and alias normaliser our own seeding uses (``markdown``,
``aliases``), so title, type and aliases are what BrainBench's brain would hold.
"""

from __future__ import annotations

from brainbench.brain.aliases import normalize_alias_list
from brainbench.brain.markdown import PageParseError, parse_page
from brainbench.brain.seeding import SeedError
from brainbench.brain.store import jsonb_problem
from brainbench.corpus.slugs import SlugError, validate_slug
from brainbench.jsstring import without_lone_surrogates
from brainbench.models.corpus import Fixture
from brainbench.models.seed import SeedDocument, SeedDocumentAlias, SeedDocumentFact, SeedDocumentPage


def fixture_sources(fixture: Fixture) -> list[str]:
    """Every source the fixture uses, first-seen order, ``default`` first (it always exists)."""
    seen = ["default", *(fixture.sources or []), fixture.source]
    seen += [p.source_id or "default" for p in fixture.seed_pages or []]
    seen += [f.source_id or "default" for f in fixture.seed_facts or []]
    return list(dict.fromkeys(s for s in seen if s))


def seed_document(fixture: Fixture) -> SeedDocument:
    """The document for ``fixture``; a page our seeding would refuse raises the same ``SeedError``."""
    pages: list[SeedDocumentPage] = []
    aliases: list[SeedDocumentAlias] = []
    for page in fixture.seed_pages or []:
        source = page.source_id or "default"
        where = f"seed failed for fixture {fixture.fixture_id} at {page.slug!r}"
        try:
            slug = validate_slug(page.slug)
            parsed = parse_page(slug, page.content)
        except SlugError as exc:
            raise SeedError(f"{where}: invalid slug: {exc}") from exc
        except PageParseError as exc:
            raise SeedError(f"{where}: {exc}") from exc
        problem = jsonb_problem(parsed.frontmatter)
        if problem is not None:  # our seeding refuses it too (store.import_page)
            raise SeedError(f"{where}: frontmatter cannot be stored: gbrain's jsonb column refuses {problem}")
        # A lone surrogate half (from a YAML escape) is U+FFFD on any UTF-8 wire, as in gbrain's database.
        pages.append(SeedDocumentPage(slug=slug, source=source, content=page.content,
                                      frontmatter=without_lone_surrogates(parsed.meta),
                                      title=without_lone_surrogates(parsed.title), type=parsed.type,
                                      body=without_lone_surrogates(parsed.body)))
        aliases += [SeedDocumentAlias(slug=slug, source=source, alias=without_lone_surrogates(a))
                    for a in normalize_alias_list(parsed.frontmatter.get("aliases"))]
    facts = [SeedDocumentFact(source=f.source_id or "default", fact=f.fact, entity_slug=f.entity_slug,
                              provenance=f.source or "bench:seed", source_session=f.source_session)
             for f in fixture.seed_facts or []]
    return SeedDocument(fixture_id=fixture.fixture_id, active_source=fixture.source,
                        sources=fixture_sources(fixture), pages=pages, aliases=aliases, facts=facts)
