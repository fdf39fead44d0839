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
    for name in ("seed-document", "brain-contract", "write-back-document"):
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
    ('{"version": 3, "seed": ["/s"]}', "'version'"),
    ('{"version": 1, "seed": ["/s"], "write_back": ["/w"]}', 'write_back needs "version": 2'),
    ('{"version": 1, "seed": ["/s"], "events": {"claude-code": ["Stop"]}}', 'events needs "version": 2'),
    ('{"version": 2, "seed": ["/s"], "events": {"cursor": ["Stop"]}}', "unknown harness 'cursor'"),
    ('{"version": 2, "seed": ["/s"], "events": {"codex": ["SessionEnd"]}}', "unknown event 'SessionEnd'"),
    ('{"version": 2, "seed": ["/s"], "operations": []}', "'operations'"),
    ('{"version": 2, "seed": ["/s"], "operations_timeout_s": 0}', "'operations_timeout_s'"),
    ('{"version": 2, "seed": ["/s"], "operations": ["/o"], "operations_verbs": ["recal"]}', "'operations_verbs.0'"),
    ('{"version": 2, "seed": ["/s"], "operations_verbs": ["recall"]}', "operations_verbs needs an operations command"),
    ('{"version": 1, "seed": ["/s"], "operations_verbs": ["recall"]}', 'operations_verbs needs "version": 2'),
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


def test_the_cli_prints_a_fixtures_seed_document(reference: Path) -> None:
    import subprocess
    import sys

    corpus = ["--fixtures", str(reference / "corpus" / "fixtures"), "--gold", str(reference / "corpus" / "gold")]
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "brain", "seed-document", "ms-001-two-source-alias",
                           *corpus], capture_output=True, text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    jsonschema.validate(doc, schema_for("seed-document"))
    fixture = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold").by_id()
    assert doc == seed_document(fixture["ms-001-two-source-alias"].fixture).model_dump(mode="json")
    missing = subprocess.run([sys.executable, "-m", "brainbench.cli", "brain", "seed-document", "ms-001-two-source",
                              *corpus], capture_output=True, text=True, check=False, timeout=120)
    assert missing.returncode == 2
    assert "did you mean ms-001-two-source-alias?" in missing.stderr


def test_a_v2_label_parses_and_a_v1_label_is_unchanged() -> None:
    label = json.dumps({"version": 2, "init": ["/bin/m", "init"], "seed": ["/bin/m", "seed"],
                        "write_back": ["/bin/m", "write-back"], "operations": ["/bin/m", "operations"],
                        "events": {"claude-code": ["SessionStart", "UserPromptSubmit", "Stop", "SessionEnd"],
                                   "openclaw": ["agent_end"]},
                        "write_back_timeout_s": 20, "operations_timeout_s": 5})
    contract = brain_contract_of("img:2", {"io.brainbench.brain": label})
    assert contract is not None and contract.version == 2
    assert contract.write_back == ["/bin/m", "write-back"] and contract.operations == ["/bin/m", "operations"]
    assert contract.handles("claude-code", "Stop") and contract.handles("openclaw", "agent_end")
    assert not contract.handles("codex", "Stop") and not contract.handles("openclaw", "session_end")
    jsonschema.validate(json.loads(label), schema_for("brain-contract"))
    v1 = brain_contract_of("img:1", {"io.brainbench.brain": '{"version": 1, "seed": ["/s"]}'})
    assert v1 is not None and (v1.events, v1.write_back, v1.operations) == ({}, None, None)


def test_the_write_back_document_carries_the_gold_extractors_facts(reference: Path) -> None:
    from brainbench.writeback.document import write_back_document
    from brainbench.writeback.extractors import GoldExtractor

    corpus = load_corpus(REPO / "fixtures", REPO / "gold")
    writers = [i for i in corpus.fixtures if "write-back" in i.fixture.suites]
    assert writers
    for item in writers:
        doc = write_back_document(item, GoldExtractor(item))
        jsonschema.validate(doc.model_dump(mode="json"), schema_for("write-back-document"))
        assert not doc.llm and doc.page_slug == f"conversations/bench-{item.fixture_id}"
        assert all(s.session_id == doc.session_id and s.page_slug == doc.page_slug for s in doc.segments)
        facts = [f.fact for s in doc.segments for f in s.facts]
        gold = [g.fact for t in item.gold.turns.values() for g in t.gold_facts or []]
        assert sorted(facts) == sorted(gold), item.fixture_id  # every gold fact, once, in its segment
        llm = write_back_document(item, None)
        assert llm.llm and all(s.facts == [] for s in llm.segments)
