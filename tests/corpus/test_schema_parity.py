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


def _assert_same_verdicts(theirs: dict[str, Any], ours: dict[str, Any], docs: list[tuple[str, Any]],
                          broken: list[tuple[str, Any]], label: str) -> None:
    """gbrain's schema accepts every published document and rejects every broken one; ours agrees on each."""
    for name, doc in docs + broken:
        their_ok = jsonschema.Draft7Validator(theirs).is_valid(doc)
        our_ok = jsonschema.Draft202012Validator(ours).is_valid(doc)
        assert our_ok == their_ok, f"{label} {name}: ours {our_ok}, gbrain {their_ok}"
    assert all(jsonschema.Draft7Validator(theirs).is_valid(d) for _, d in docs)
    assert not any(jsonschema.Draft7Validator(theirs).is_valid(d) for _, d in broken)


@pytest.mark.parametrize("kind", ["fixture", "gold"])
def test_same_verdicts_as_gbrain(reference: Path, kind: str) -> None:
    theirs = json.loads((reference / "schema" / f"{kind}.schema.json").read_text())
    ours = schema_for(kind)
    docs = _docs(reference, "fixtures" if kind == "fixture" else "gold")
    base = docs[3][1]  # kta-001 / its gold: a representative document
    broken = _broken_fixtures(base) if kind == "fixture" else _broken_golds(base)
    assert len(broken) >= 9
    _assert_same_verdicts(theirs, ours, docs, broken, kind)


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


def _edited(base: dict[str, Any], edits: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    out = []
    for name, fn in edits:
        doc = copy.deepcopy(base)
        fn(doc)
        out.append((name, doc))
    return out


def _broken_trust_fixtures(base: dict[str, Any]) -> list[tuple[str, Any]]:
    def in_step(**fields: Any) -> Any:
        return lambda d: d["trust_steps"][0].update(fields)

    return _edited(base, [
        ("empty trust_steps", lambda d: d.update(trust_steps=[])),
        ("trust_steps not an array", lambda d: d.update(trust_steps={})),
        ("step unknown key", in_step(owner="me")),
        ("step missing op", lambda d: d["trust_steps"][0].pop("op")),
        ("step missing step_id", lambda d: d["trust_steps"][0].pop("step_id")),
        ("unknown actor", in_step(actor="admin")),
        ("unknown op", in_step(op="delete")),
        ("kind outside the enum", in_step(kind="rumour")),
        ("content_origin outside the enum", in_step(content_origin="hearsay")),
        ("target not a string", in_step(target=1)),
        ("unknown suite", lambda d: d.update(suites=["memory"])),
    ])


def _broken_trust_golds(base: dict[str, Any]) -> list[tuple[str, Any]]:
    def in_item(**fields: Any) -> Any:
        return lambda d: d["trust"]["items"][0].update(fields)

    return _edited(base, [
        ("trust without items", lambda d: d.update(trust={})),
        ("empty items", lambda d: d.update(trust={"items": []})),
        ("trust unknown key", lambda d: d["trust"].update(note="x")),
        ("item unknown key", in_item(note="x")),
        ("item missing check", lambda d: d["trust"]["items"][0].pop("check")),
        ("unknown check", in_item(check="fresh")),
        ("unknown tier", in_item(tier="owner")),
        ("unknown arm", in_item(arm="internal")),
        ("short canary", in_item(canary="zqce01")),
        ("preference not boolean", in_item(preference="yes")),
        ("claim not a string", in_item(claim=3)),
        ("trust gold without turns", lambda d: d.pop("turns")),
    ])


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
    _assert_same_verdicts(theirs, ours, docs, broken, f"0.60 {kind}")


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
