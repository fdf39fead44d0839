"""Doctor's own little brain: one page to find, one page to miss, one page in another source."""

from __future__ import annotations

from typing import Any

from brainbench.brain.seeding import SeedReport
from brainbench.brain.store import ensure_sources, import_page
from brainbench.models.corpus import Fixture

SOURCE = "default"
OTHER_SOURCE = "doctor-elsewhere"
# A prompt that names exactly one page of the active source, by its title.
PROMPT = "What did we decide about the Acme Example launch?"
EXPECTED_SLUG = "companies/acme-example"
# Same title, another source: injecting it is a source-isolation leak.
FOREIGN_SLUG = "companies/acme-example-elsewhere"
UNRELATED_SLUG = "people/zed-unrelated"

_PAGES: tuple[tuple[str, str, str], ...] = (
    (EXPECTED_SLUG, SOURCE,
     "---\ntitle: Acme Example\ntype: company\naliases: [acme]\nsummary: Launch partner; we chose a May launch.\n"
     "---\n\nAcme Example is the launch partner. Decision: launch in May.\n"),
    (UNRELATED_SLUG, SOURCE,
     "---\ntitle: Zed Unrelated\ntype: person\nsummary: Nobody the prompt mentions.\n---\n\nZed.\n"),
    (FOREIGN_SLUG, OTHER_SOURCE,
     "---\ntitle: Acme Example\ntype: company\nsummary: The same name in another source.\n---\n\nElsewhere.\n"),
)


def seed_sample(conn: Any) -> SeedReport:
    ensure_sources(conn, [SOURCE, OTHER_SOURCE])
    report = SeedReport()
    for slug, source, content in _PAGES:
        status, detail = import_page(conn, slug, content, source)
        if status != "imported":
            raise RuntimeError(f"doctor's sample brain: {slug}: {status}: {detail}")
        report.slug_sources.setdefault(slug, set()).add(source)
        report.pages += 1
    return report


def reference_fixture() -> Fixture:
    """The same pages as a fixture: what an image-seeded brain's ``seed`` is given by doctor."""
    return Fixture.model_validate({
        "schema_version": 1, "fixture_id": "doctor-reference", "suites": ["know-to-ask"],
        "sources": [SOURCE, OTHER_SOURCE], "active_source": SOURCE,
        "seed_pages": [{"slug": slug, "content": content, "source_id": source} for slug, source, content in _PAGES],
        "turns": [{"turn_id": 1, "role": "user", "text": PROMPT}],
    })
