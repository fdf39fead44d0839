"""Corpus loading, hashing and every malformation we promise a clear one-line error for."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from brainbench.corpus.errors import CorpusError
from brainbench.corpus.loader import load_corpus

BASE_FIXTURE: dict[str, Any] = {
    "schema_version": 1,
    "fixture_id": "t-001",
    "suites": ["know-to-ask", "push"],
    "category": "kta-pos",
    "seed_pages": [{"slug": "people/ann-ample", "content": "---\ntitle: Ann Ample\ntype: person\n---\n\nAnn.\n"}],
    "turns": [
        {"turn_id": 1, "role": "user", "text": "What about Ann Ample?"},
        {"turn_id": 2, "role": "assistant", "text": "She is fine."},
    ],
}
BASE_GOLD: dict[str, Any] = {
    "fixture_id": "t-001",
    "turns": {"1": {"should_retrieve": True, "gold_slugs": ["people/ann-ample"]}},
}


def write_corpus(root: Path, fixture: Any, gold: Any, *, raw_fixture: bytes | None = None) -> tuple[Path, Path]:
    fx, gd = root / "fixtures", root / "gold"
    fx.mkdir(parents=True, exist_ok=True)
    gd.mkdir(parents=True, exist_ok=True)
    (fx / "t-001.fixture.json").write_bytes(raw_fixture if raw_fixture is not None else json.dumps(fixture).encode())
    if gold is not None:
        (gd / "t-001.gold.json").write_text(json.dumps(gold))
    return fx, gd


def test_reference_corpus_loads_and_hash_follows_the_algorithm(reference: Path) -> None:
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    assert [f.fixture_id for f in corpus.fixtures] == sorted(f.fixture_id for f in corpus.fixtures)
    assert len(corpus.fixtures) == 7 and list(corpus.pairs) == ["cont-001"]
    digest = hashlib.sha256()
    for prefix in ("gold", "fixtures"):
        for path in sorted((reference / "corpus" / prefix).iterdir()):
            digest.update(f"{prefix}/{path.name}\n".encode() + path.read_bytes())
    assert corpus.fixtures_hash == digest.hexdigest()


def test_hash_covers_gold_and_holdout(tmp_path: Path) -> None:
    fx, gd = write_corpus(tmp_path, BASE_FIXTURE, BASE_GOLD)
    before = load_corpus(fx, gd).fixtures_hash
    gold = copy.deepcopy(BASE_GOLD)
    gold["turns"]["1"]["acceptable_slugs"] = []
    (gd / "t-001.gold.json").write_text(json.dumps(gold))
    after_gold = load_corpus(fx, gd).fixtures_hash
    assert after_gold != before
    fixture = copy.deepcopy(BASE_FIXTURE) | {"holdout": True}
    (fx / "t-001.fixture.json").write_text(json.dumps(fixture))
    corpus = load_corpus(fx, gd)
    assert corpus.fixtures[0].fixture.is_holdout and corpus.fixtures_hash not in (before, after_gold)


def test_public_turn_carries_only_public_keys(reference: Path) -> None:
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    for item in corpus.fixtures:
        for turn in item.public_turns():
            assert set(turn.model_dump(exclude_none=True)) <= {"turn_id", "role", "text", "ts"}


Mutation = Callable[[dict[str, Any], dict[str, Any]], None]


def _set(path: list[Any], value: Any, target: str = "fixture") -> Mutation:
    def mutate(fixture: dict[str, Any], gold: dict[str, Any]) -> None:
        node: Any = fixture if target == "fixture" else gold
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return mutate


def _delete(path: list[Any], target: str = "fixture") -> Mutation:
    def mutate(fixture: dict[str, Any], gold: dict[str, Any]) -> None:
        node: Any = fixture if target == "fixture" else gold
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return mutate


def _writeback_without_ts(fixture: dict[str, Any], gold: dict[str, Any]) -> None:
    fixture["suites"] = ["write-back"]


def _writer_without_ts(fixture: dict[str, Any], gold: dict[str, Any]) -> None:
    fixture["suites"] = ["continuity"]
    fixture["continuity"] = {"pair_id": "p1", "pair_role": "writer"}


MALFORMATIONS: list[tuple[str, Mutation, str, str]] = [
    ("unknown top-level key", _set(["colour"], "red"), "$.colour", "unknown key 'colour'"),
    ("gold inside a turn", _set(["turns", 0, "gold"], {}), "$.turns[0].gold", "gold is SEALED"),
    ("gold at top level", _set(["gold"], {}), "$.gold", "gold is SEALED"),
    ("schema_version 2", _set(["schema_version"], 2), "$.schema_version", "Input should be 1"),
    ("fixture_id with capitals", _set(["fixture_id"], "Bad_ID"), "$.fixture_id", "pattern"),
    ("empty suites", _set(["suites"], []), "$.suites", "at least 1"),
    ("unknown suite", _set(["suites"], ["recall"]), "$.suites[0]", "know-to-ask"),
    ("turn_id not an integer", _set(["turns", 0, "turn_id"], 1.5), "$.turns[0].turn_id", "integer"),
    ("turn_id boolean", _set(["turns", 0, "turn_id"], True), "$.turns[0].turn_id", "integer"),
    ("bad role", _set(["turns", 0, "role"], "system"), "$.turns[0].role", "'user' or 'assistant'"),
    ("empty text", _set(["turns", 0, "text"], ""), "$.turns[0].text", "at least 1 character"),
    ("text not a string", _set(["turns", 0, "text"], 7), "$.turns[0].text", "valid string"),
    ("bad ts", _set(["turns", 0, "ts"], "yesterday-ish"), "$.turns[0].ts", "not a parseable date-time"),
    ("duplicate turn_id", _set(["turns", 1, "turn_id"], 1), "$.turns[1].turn_id", "duplicate turn_id 1"),
    ("missing turns", _delete(["turns"]), "$.turns", "missing required field"),
    ("empty turns", _set(["turns"], []), "$.turns", "at least 1"),
    ("seed page unknown key", _set(["seed_pages", 0, "title"], "x"), "$.seed_pages[0].title", "unknown key"),
    ("seed page empty content", _set(["seed_pages", 0, "content"], ""), "$.seed_pages[0].content", "at least 1"),
    ("write-back without ts", _writeback_without_ts, "$.turns[0].ts", "requires ts"),
    ("continuity writer without ts", _writer_without_ts, "$.turns[0].ts", "requires ts"),
    ("holdout not boolean", _set(["holdout"], "yes"), "$.holdout", "valid boolean"),
    ("gold for a missing turn", _set(["turns", "9"], {"should_retrieve": False}, "gold"), "$.turns.9",
     "no matching fixture turn"),
    ("retrieval gold on assistant turn", _set(["turns", "2"], {"should_retrieve": True, "gold_slugs": ["x"]}, "gold"),
     "$.turns.2", "only allowed on user turns"),
    ("should_retrieve without gold_slugs", _set(["turns", "1"], {"should_retrieve": True}, "gold"),
     "$.turns.1.gold_slugs", "must be non-empty"),
    ("gold_fact without match_keywords",
     _set(["turns", "1", "gold_facts"], [{"gist": "g", "fact": "f", "entity_slug": None, "match_keywords": []}],
          "gold"), "$.turns.1.gold_facts[0].match_keywords", "at least 1"),
    ("gold_fact missing entity_slug",
     _set(["turns", "1", "gold_facts"], [{"gist": "g", "fact": "f", "match_keywords": ["k"]}], "gold"),
     "$.turns.1.gold_facts[0].entity_slug", "missing required field"),
    ("gold unknown key", _set(["notes"], "x", "gold"), "$.notes", "unknown key"),
    ("gold continuity on a plain fixture",
     _set(["continuity"], {"pair_id": "p", "decisions": [{"decision_id": "d", "expected_slugs": [],
                                                         "match_keywords": []}]}, "gold"),
     "$.continuity", "without a continuity block"),
]


@pytest.mark.parametrize(("name", "mutate", "path", "rule"), MALFORMATIONS, ids=[m[0] for m in MALFORMATIONS])
def test_malformation_names_file_path_and_rule(tmp_path: Path, name: str, mutate: Mutation, path: str,
                                               rule: str) -> None:
    fixture, gold = copy.deepcopy(BASE_FIXTURE), copy.deepcopy(BASE_GOLD)
    mutate(fixture, gold)
    fx, gd = write_corpus(tmp_path, fixture, gold)
    with pytest.raises(CorpusError) as info:
        load_corpus(fx, gd)
    matching = [p for p in info.value.problems if p.path == path and rule in p.rule]
    assert matching, f"{name}: expected {path} / {rule!r}, got {[str(p) for p in info.value.problems]}"
    assert matching[0].file.endswith((".fixture.json", ".gold.json"))


@pytest.mark.parametrize(("raw", "rule"), [
    (b"{not json", "invalid JSON"),
    (b"\xff\xfe{}", "not valid UTF-8"),
    (b"[1, 2]", "must be a JSON object"),
    (b"[" * 100000 + b"]" * 100000, "invalid JSON"),
])
def test_unreadable_fixture_files(tmp_path: Path, raw: bytes, rule: str) -> None:
    fx, gd = write_corpus(tmp_path, None, BASE_GOLD, raw_fixture=raw)
    with pytest.raises(CorpusError) as info:
        load_corpus(fx, gd)
    assert any(rule in p.rule and p.file.endswith("t-001.fixture.json") for p in info.value.problems)


def test_join_errors(tmp_path: Path) -> None:
    fx, gd = write_corpus(tmp_path, BASE_FIXTURE, None)
    (gd / "zz-other.gold.json").write_text(json.dumps({"fixture_id": "zz-other", "turns": {}}))
    shutil.copy(fx / "t-001.fixture.json", fx / "t-002.fixture.json")
    with pytest.raises(CorpusError) as info:
        load_corpus(fx, gd)
    rules = " | ".join(p.rule for p in info.value.problems)
    assert "no gold file for fixture_id 't-001'" in rules
    assert "orphan gold file" in rules
    assert "duplicate fixture_id 't-001'" in rules


def test_incomplete_continuity_pair(tmp_path: Path) -> None:
    fixture = copy.deepcopy(BASE_FIXTURE) | {"suites": ["continuity"],
                                             "continuity": {"pair_id": "p1", "pair_role": "reader"}}
    gold = copy.deepcopy(BASE_GOLD) | {"continuity": {"pair_id": "p1", "decisions": [
        {"decision_id": "d1", "expected_slugs": ["people/ann-ample"], "match_keywords": []}]}}
    fx, gd = write_corpus(tmp_path, fixture, gold)
    with pytest.raises(CorpusError) as info:
        load_corpus(fx, gd)
    assert any("continuity pair 'p1' incomplete: no writer" in p.rule for p in info.value.problems)


def test_validate_cli_reports_every_problem_without_traceback(tmp_path: Path) -> None:
    fixture = copy.deepcopy(BASE_FIXTURE) | {"colour": 1}
    fixture["turns"][0]["gold"] = {}
    fx, gd = write_corpus(tmp_path, fixture, BASE_GOLD)
    (gd / "orphan.gold.json").write_text(json.dumps({"fixture_id": "nobody", "turns": {}}))
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "validate", "--fixtures", str(fx),
                           "--gold", str(gd)], capture_output=True, text=True, check=False)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("  ")]
    assert len(lines) == 3, proc.stderr
    assert any("t-001.fixture.json: $.colour: unknown key" in line for line in lines)
    assert any("$.turns[0].gold: gold is SEALED" in line for line in lines)
    assert any("orphan.gold.json: $.fixture_id: orphan gold file" in line for line in lines)


def test_validate_cli_prints_hash_when_clean(reference: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "validate", "--fixtures",
                           str(reference / "corpus" / "fixtures"), "--gold", str(reference / "corpus" / "gold")],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    corpus = load_corpus(reference / "corpus" / "fixtures", reference / "corpus" / "gold")
    assert f"fixtures_hash {corpus.fixtures_hash}" in proc.stdout
