"""Seed contract v1 models: the label parses with one-line errors; the document matches our own seeding."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import psycopg
import pytest
from brainbench.brain.seed_document import seed_document
from brainbench.brain.seeding import SeedError, seed_fixture
from brainbench.corpus.loader import load_corpus
from brainbench.models.corpus import Fixture
from brainbench.models.seed import BrainContract, BrainContractError, brain_contract_of
from brainbench.schemas import schema_for

REPO = Path(__file__).resolve().parents[2]


def test_published_schemas_are_generated_from_the_models() -> None:
    for name in ("seed-document", "brain-contract"):
        committed = json.loads((REPO / "schema" / f"{name}.schema.json").read_text())
        assert committed == schema_for(name), f"schema/{name}.schema.json is stale: regenerate it"


def test_a_full_label_parses() -> None:
    label = json.dumps({"version": 1, "extensions": ["vector", "pg_trgm", "uuid-ossp"], "init": ["/bin/init"],
                        "seed": ["/bin/seed", "--x"], "init_timeout_s": 5, "seed_timeout_s": 2.5})
    contract = brain_contract_of("img:1", {"io.brainbench.brain": label})
    assert contract == BrainContract(version=1, extensions=["vector", "pg_trgm", "uuid-ossp"], init=["/bin/init"],
                                     seed=["/bin/seed", "--x"], init_timeout_s=5, seed_timeout_s=2.5)
    assert brain_contract_of("img:1", {}) is None
    jsonschema.validate(json.loads(label), schema_for("brain-contract"))


@pytest.mark.parametrize(("label", "field"), [
    ('{"version": 2, "seed": ["/s"]}', "'version'"),
    ('{"version": 1}', "'seed'"),
    ('{"version": 1, "seed": []}', "'seed'"),
    ('{"version": 1, "seed": "/bin/seed"}', "'seed'"),
    ('{"version": 1, "seed": ["/s"], "extensions": ["x; DROP"]}', "'extensions.0'"),
    ('{"version": 1, "seed": ["/s"], "seed_timeout_s": 0}', "'seed_timeout_s'"),
    ('{"version": 1, "seed": ["/s"], "sed": ["/s"]}', "'sed'"),
    ('{"version": 1, "seed": ["/s"]', "not JSON"),
    ('["/s"]', "JSON object"),
])
def test_a_bad_label_is_one_line_naming_image_and_field(label: str, field: str) -> None:
    with pytest.raises(BrainContractError) as info:
        brain_contract_of("bbtest-seed-bad:1", {"io.brainbench.brain": label})
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("image bbtest-seed-bad:1: label io.brainbench.brain: ")
    assert field in message


def test_every_fixture_document_is_valid_and_agrees_with_our_seeding(
        reference: Path, brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold").by_id()
    schema = schema_for("seed-document")
    item = corpus["ms-001-two-source-alias"] if "ms-001-two-source-alias" in corpus else next(iter(corpus.values()))
    for other in corpus.values():
        jsonschema.validate(seed_document(other.fixture).model_dump(mode="json"), schema)
    doc = seed_document(item.fixture)
    seed_fixture(conn, item.fixture)
    stored = {(r[0], r[1]): (r[2], r[3]) for r in conn.execute("SELECT source_id, slug, title, type FROM pages")}
    assert doc.pages
    assert {(p.source, p.slug): (p.title, p.type) for p in doc.pages} == stored
    aliases = {tuple(r) for r in conn.execute("SELECT source_id, slug, alias_norm FROM page_aliases")}
    assert {(a.source, a.slug, a.alias) for a in doc.aliases} == aliases
    facts = conn.execute("SELECT source_id, fact, entity_slug, source FROM facts ORDER BY id").fetchall()
    assert [(f.source, f.fact, f.entity_slug, f.provenance) for f in doc.facts] == [tuple(r) for r in facts]
    assert doc.sources[0] == "default" and item.fixture.source in doc.sources
    for page in doc.pages:  # the raw page, frontmatter included, and what follows it
        assert page.content.endswith(page.body)


def test_a_page_our_seeding_refuses_is_refused_alike() -> None:
    fixture = Fixture.model_validate({
        "schema_version": 1, "fixture_id": "bad-page", "suites": ["know-to-ask"],
        "seed_pages": [{"slug": "people/x", "content": "---\ntitle: [unclosed\n---\nbody"}],
        "turns": [{"turn_id": 1, "role": "user", "text": "hi"}]})
    with pytest.raises(SeedError, match="bad-page"):
        seed_document(fixture)
