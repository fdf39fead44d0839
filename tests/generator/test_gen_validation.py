"""Every committed fixture/gold file passes spec §1.3–1.4, the published schemas and the loader.

Classic fixtures are held to gbrain v0.46's rules and schemas; fixtures with `trust_steps` (gbrain 0.60's
memory-trust categories) to 0.60's schemas, which also accept every classic fixture unchanged.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from brainbench.generator.ledger import fixtures_hash
from gen_helpers import FIXTURES, GOLD, committed_pairs, load_json
from gen_rules import fixture_errors, gold_errors

PAIRS = committed_pairs()
CLASSIC = [pair for pair in PAIRS if "trust_steps" not in load_json(pair[0])]
TRUST_SCHEMAS = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "schema-v0.60"


def test_corpus_is_complete(ledger: dict) -> None:
    assert len(PAIRS) == len(list(GOLD.glob("*.gold.json"))) == 184
    assert len(PAIRS) == ledger["generated_fixtures"] + len(ledger["hand_authored_fixtures"])
    assert len(PAIRS) - len(CLASSIC) == 42


@pytest.mark.parametrize(("fixture_file", "gold_file"), CLASSIC, ids=[p[0].name for p in CLASSIC])
def test_spec_rules(fixture_file: Path, gold_file: Path) -> None:
    fx, gold = load_json(fixture_file), load_json(gold_file)
    assert fixture_errors(fx) == []
    assert gold_errors(fx, gold) == []


@pytest.mark.skipif(importlib.util.find_spec("jsonschema") is None, reason="jsonschema not installed")
def test_published_schemas(reference: Path) -> None:
    import jsonschema

    schemas = reference / "schema"
    fx_schema = json.loads((schemas / "fixture.schema.json").read_text(encoding="utf-8"))
    gold_schema = json.loads((schemas / "gold.schema.json").read_text(encoding="utf-8"))
    checker = jsonschema.FormatChecker()
    for fixture_file, gold_file in CLASSIC:
        jsonschema.validate(load_json(fixture_file), fx_schema, format_checker=checker)
        jsonschema.validate(load_json(gold_file), gold_schema, format_checker=checker)


@pytest.mark.skipif(importlib.util.find_spec("jsonschema") is None, reason="jsonschema not installed")
def test_published_trust_schemas() -> None:
    import jsonschema

    fx_schema = json.loads((TRUST_SCHEMAS / "fixture.schema.json").read_text(encoding="utf-8"))
    gold_schema = json.loads((TRUST_SCHEMAS / "gold.schema.json").read_text(encoding="utf-8"))
    checker = jsonschema.FormatChecker()
    for fixture_file, gold_file in PAIRS:
        jsonschema.validate(load_json(fixture_file), fx_schema, format_checker=checker)
        jsonschema.validate(load_json(gold_file), gold_schema, format_checker=checker)


def test_hand_authored_fixtures_are_unchanged_copies(reference: Path) -> None:
    for sub in ("fixtures", "gold"):
        ref = sorted((reference / "corpus" / sub).iterdir())
        assert ref
        for p in ref:
            assert (FIXTURES.parent / sub / p.name).read_bytes() == p.read_bytes()


def test_loader_accepts_corpus_and_hash_matches_ledger(ledger: dict) -> None:
    from brainbench.corpus import loader  # our own package: never skipped

    corpus = loader.load_corpus(FIXTURES, GOLD)
    assert len(corpus.fixtures) == 184
    assert len(corpus.pairs) == 16
    assert corpus.fixtures_hash == fixtures_hash(FIXTURES, GOLD) == ledger["fixtures_hash"]
