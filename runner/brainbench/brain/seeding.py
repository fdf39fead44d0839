"""Seed one fixture's brain exactly as gbrain's seedBrain does (spec §2.3)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import psycopg

from brainbench.brain.markdown import parse_page
from brainbench.brain.store import ensure_sources, import_page, insert_fact
from brainbench.corpus.slugs import SlugError, validate_slug
from brainbench.models.corpus import Fixture


class SeedError(RuntimeError):
    """A fixture could not be seeded; the fixture is skipped and the run exits 2."""


@dataclass
class SeedReport:
    # slug → every source it was seeded into: the same slug may live in two sources.
    slug_sources: dict[str, set[str]] = field(default_factory=dict)
    pages: int = 0
    facts: int = 0

    def merge(self, other: SeedReport) -> SeedReport:
        merged = {k: set(v) for k, v in self.slug_sources.items()}
        for slug, sources in other.slug_sources.items():
            merged.setdefault(slug, set()).update(sources)
        return SeedReport(merged, self.pages + other.pages, self.facts + other.facts)


def parse_ahead(fixtures: Iterable[Fixture]) -> None:
    """Parse the pages ``fixtures`` will seed, in order, into ``parse_page``'s cache (at most half of
    it, so the first fixtures' pages are still there when they are seeded): a run does this while
    it starts its seams, and each seed then only writes, in the replay, where the runner's thread
    is the run's narrowest resource.  A page that does not parse is left to its seed to report."""
    room = (parse_page.cache_info().maxsize or 0) // 2
    for fixture in fixtures:
        for page in fixture.seed_pages or []:
            if room <= 0:
                return
            room -= 1
            try:
                parse_page(validate_slug(page.slug), page.content)
            except Exception:
                continue


def seed_fixture(conn: psycopg.Connection, fixture: Fixture) -> SeedReport:
    sources = [*(fixture.sources or []), fixture.source]
    sources += [p.source_id for p in fixture.seed_pages or [] if p.source_id]
    sources += [f.source_id for f in fixture.seed_facts or [] if f.source_id]
    ensure_sources(conn, sources)
    report = SeedReport()
    for page in fixture.seed_pages or []:
        source = page.source_id or "default"
        try:
            slug = validate_slug(page.slug)
        except SlugError as exc:
            where = f"seed failed for fixture {fixture.fixture_id} at {page.slug!r}"
            raise SeedError(f"{where}: invalid slug: {exc}") from exc
        try:
            status, detail = import_page(conn, slug, page.content, source)
        except psycopg.Error as exc:
            raise SeedError(f"seed failed for fixture {fixture.fixture_id} at {page.slug}: {exc}") from exc
        if status != "imported":
            raise SeedError(f"seed failed for fixture {fixture.fixture_id} at {page.slug}: {status}: {detail}")
        report.slug_sources.setdefault(slug, set()).add(source)
        report.pages += 1
    for fact in fixture.seed_facts or []:
        try:
            insert_fact(
                conn,
                fact.source_id or "default",
                fact=fact.fact,
                entity_slug=fact.entity_slug,
                source=fact.source or "bench:seed",
                source_session=fact.source_session,
            )
        except psycopg.Error as exc:
            raise SeedError(f"seed failed for fixture {fixture.fixture_id} at fact {fact.fact[:40]!r}: {exc}") from exc
        report.facts += 1
    return report
