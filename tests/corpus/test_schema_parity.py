"""Our generated schemas and gbrain's published ones accept and reject the same documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from brainbench.schemas import export_schemas, schema_for

jsonschema = pytest.importorskip("jsonschema")


def _docs(reference: Path, kind: str) -> list[tuple[str, Any]]:
    return [(p.name, json.loads(p.read_text())) for p in sorted((reference / "corpus" / kind).iterdir())]


def _broken_fixtures(base: dict[str, Any]) -> list[tuple[str, Any]]:
    def edit(name: str, fn: Any) -> tuple[str, Any]:
        doc = copy.deepcopy(base)
        fn(doc)
        return name, doc

    return [
        edit("unknown key", lambda d: d.update(colour="red")),
        edit("gold key", lambda d: d.update(gold={})),
        edit("gold in turn", lambda d: d["turns"][0].update(gold={})),
        edit("schema_version 2", lambda d: d.update(schema_version=2)),
        edit("bad fixture_id", lambda d: d.update(fixture_id="Bad Id")),
        edit("empty suites", lambda d: d.update(suites=[])),
        edit("unknown suite", lambda d: d.update(suites=["recall"])),
        edit("missing turns", lambda d: d.pop("turns")),
        edit("empty turns", lambda d: d.update(turns=[])),
        edit("turn missing text", lambda d: d["turns"][0].pop("text")),
        edit("empty text", lambda d: d["turns"][0].update(text="")),
        edit("bad role", lambda d: d["turns"][0].update(role="tool")),
        edit("string turn_id", lambda d: d["turns"][0].update(turn_id="1")),
        edit("fractional turn_id", lambda d: d["turns"][0].update(turn_id=1.5)),
        edit("null ts", lambda d: d["turns"][0].update(ts=None)),
        edit("holdout string", lambda d: d.update(holdout="yes")),
        edit("seed page extra key", lambda d: d.update(seed_pages=[{"slug": "a", "content": "b", "x": 1}])),
        edit("seed page missing content", lambda d: d.update(seed_pages=[{"slug": "a"}])),
        edit("continuity bad role", lambda d: d.update(continuity={"pair_id": "p", "pair_role": "both"})),
    ]


def _broken_golds(base: dict[str, Any]) -> list[tuple[str, Any]]:
    def edit(name: str, fn: Any) -> tuple[str, Any]:
        doc = copy.deepcopy(base)
        fn(doc)
        return name, doc

    fact = {"gist": "g", "fact": "f", "entity_slug": None, "match_keywords": ["k"], "kind": "fact"}

    def facts(*items: dict[str, Any]) -> Any:
        return lambda d: d["turns"].update({"1": {"should_retrieve": False, "gold_facts": list(items)}})

    def decisions(*items: dict[str, Any]) -> Any:
        return lambda d: d.update(continuity={"pair_id": "p", "decisions": list(items)})
    return [
        edit("unknown key", lambda d: d.update(notes="x")),
        edit("missing turns", lambda d: d.pop("turns")),
        edit("turn missing should_retrieve", lambda d: d["turns"].update({"1": {"gold_slugs": ["a"]}})),
        edit("gold_slugs not array", lambda d: d["turns"].update({"1": {"should_retrieve": True, "gold_slugs": "a"}})),
        edit("fact without entity_slug", facts({k: v for k, v in fact.items() if k != "entity_slug"})),
        edit("fact empty keywords", facts(fact | {"match_keywords": []})),
        edit("fact bad kind", facts(fact | {"kind": "rumour"})),
        edit("continuity empty decisions", decisions()),
        edit("decision missing keywords", decisions({"decision_id": "d", "expected_slugs": []})),
    ]


@pytest.mark.parametrize("kind", ["fixture", "gold"])
def test_same_verdicts_as_gbrain(reference: Path, kind: str) -> None:
    theirs = json.loads((reference / "schema" / f"{kind}.schema.json").read_text())
    ours = schema_for(kind)
    docs = _docs(reference, "fixtures" if kind == "fixture" else "gold")
    base = docs[3][1]  # kta-001 / its gold: a representative document
    broken = _broken_fixtures(base) if kind == "fixture" else _broken_golds(base)
    assert len(broken) >= 9
    for name, doc in docs + broken:
        their_ok = jsonschema.Draft7Validator(theirs).is_valid(doc)
        our_ok = jsonschema.Draft202012Validator(ours).is_valid(doc)
        assert our_ok == their_ok, f"{kind} {name}: ours {our_ok}, gbrain {their_ok}"
    assert all(jsonschema.Draft7Validator(theirs).is_valid(d) for _, d in docs)
    assert not any(jsonschema.Draft7Validator(theirs).is_valid(d) for _, d in broken)


def test_export_writes_every_schema(tmp_path: Path) -> None:
    names = {p.name for p in export_schemas(tmp_path)}
    assert {"fixture.schema.json", "gold.schema.json", "result.schema.json", "baseline.schema.json",
            "hook-input.schema.json", "hook-output.schema.json"} <= names
    for path in tmp_path.iterdir():
        schema = json.loads(path.read_text())
        assert "json-schema.org" in schema["$schema"]
        jsonschema.validators.validator_for(schema).check_schema(schema)


# --- gbrain 0.60: eight suites, trust_steps, gold trust items ---------------------------------------------

TRUST_REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference-trust"


def _trust_docs(kind: str) -> list[tuple[str, Any]]:
    directory = TRUST_REFERENCE / "corpus-trust" / kind
    return [(p.name, json.loads(p.read_text())) for p in sorted(directory.iterdir())]


def _broken_trust_fixtures(base: dict[str, Any]) -> list[tuple[str, Any]]:
    def edit(name: str, fn: Any) -> tuple[str, Any]:
        doc = copy.deepcopy(base)
        fn(doc)
        return name, doc

    def in_step(**fields: Any) -> Any:
        return lambda d: d["trust_steps"][0].update(fields)

    return [
        edit("empty trust_steps", lambda d: d.update(trust_steps=[])),
        edit("trust_steps not an array", lambda d: d.update(trust_steps={})),
        edit("step unknown key", in_step(owner="me")),
        edit("step missing op", lambda d: d["trust_steps"][0].pop("op")),
        edit("step missing step_id", lambda d: d["trust_steps"][0].pop("step_id")),
        edit("unknown actor", in_step(actor="admin")),
        edit("unknown op", in_step(op="delete")),
        edit("kind outside the enum", in_step(kind="rumour")),
        edit("content_origin outside the enum", in_step(content_origin="hearsay")),
        edit("target not a string", in_step(target=1)),
        edit("unknown suite", lambda d: d.update(suites=["memory"])),
    ]


def _broken_trust_golds(base: dict[str, Any]) -> list[tuple[str, Any]]:
    def edit(name: str, fn: Any) -> tuple[str, Any]:
        doc = copy.deepcopy(base)
        fn(doc)
        return name, doc

    def in_item(**fields: Any) -> Any:
        return lambda d: d["trust"]["items"][0].update(fields)

    return [
        edit("trust without items", lambda d: d.update(trust={})),
        edit("empty items", lambda d: d.update(trust={"items": []})),
        edit("trust unknown key", lambda d: d["trust"].update(note="x")),
        edit("item unknown key", in_item(note="x")),
        edit("item missing check", lambda d: d["trust"]["items"][0].pop("check")),
        edit("unknown check", in_item(check="fresh")),
        edit("unknown tier", in_item(tier="owner")),
        edit("unknown arm", in_item(arm="internal")),
        edit("short canary", in_item(canary="zqce01")),
        edit("preference not boolean", in_item(preference="yes")),
        edit("claim not a string", in_item(claim=3)),
        edit("trust gold without turns", lambda d: d.pop("turns")),
    ]


@pytest.mark.parametrize("kind", ["fixture", "gold"])
def test_same_verdicts_as_gbrain_060(reference: Path, kind: str) -> None:
    theirs = json.loads((TRUST_REFERENCE / "schema-v0.60" / f"{kind}.schema.json").read_text())
    ours = schema_for(kind)
    plural = "fixtures" if kind == "fixture" else "gold"
    docs = _trust_docs(plural) + _docs(reference, plural)
    by_name = dict(docs)
    if kind == "fixture":
        broken = _broken_trust_fixtures(by_name["gen-poison-ext-001.fixture.json"])
    else:
        broken = _broken_trust_golds(by_name["gen-poison-agent-002.gold.json"])
    assert len(docs) == 49 and len(broken) >= 11
    for name, doc in docs + broken:
        their_ok = jsonschema.Draft7Validator(theirs).is_valid(doc)
        our_ok = jsonschema.Draft202012Validator(ours).is_valid(doc)
        assert our_ok == their_ok, f"{kind} {name}: ours {our_ok}, gbrain 0.60 {their_ok}"
    assert all(jsonschema.Draft7Validator(theirs).is_valid(d) for _, d in docs)
    assert not any(jsonschema.Draft7Validator(theirs).is_valid(d) for _, d in broken)


def test_a_result_with_trust_cells_validates_against_gbrain_060() -> None:
    from brainbench.models.result import RunResult

    row = {"fixture_id": "gen-poison-ext-001", "turn_id": 1, "harness": "openclaw", "suite": "poisoning",
           "injected_slugs": [], "injected_tokens": 0, "gold": None, "cross_source_slugs": [], "latency_ms": 1.5}
    cell = {"suite": "deletion", "harness": "codex", "seam": "contract", "gold_total": 5, "gold_failed": 0,
            "metrics": {"residual_after_purge": 0, "receipt_completeness": 1}, "fixtures": ["gen-del-001"]}
    doc = RunResult.model_validate({
        "receipt": {"fixtures_hash": "0" * 64, "harness_sha": "x", "ts": "2026-01-01T00:00:00.000Z",
                    "cmd_args": [], "seed": 42, "include_holdout": False, "llm": False},
        "cells": [cell], "turn_rows": [row], "seed_failures": [],
    }).to_json_dict()
    theirs = json.loads((TRUST_REFERENCE / "schema-v0.60" / "result.schema.json").read_text())
    jsonschema.Draft7Validator(theirs).validate(doc)
    jsonschema.Draft202012Validator(schema_for("result")).validate(doc)
    old = json.loads((Path(__file__).resolve().parents[1] / "data" / "reference" / "schema" / "result.schema.json")
                     .read_text())
    assert not jsonschema.Draft7Validator(old).is_valid(doc), "gbrain v0.46's schema knows four suites only"
