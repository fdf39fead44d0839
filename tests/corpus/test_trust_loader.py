"""Memory-trust fixtures and gold load as gbrain 0.60's loader says (trust spec §1.4): every rule, one line each.

The base documents are gbrain's own (tests/data/reference-trust); each case breaks one rule and
expects exactly the problems that rule names (file, JSON path, rule), nothing more.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from brainbench.corpus.errors import CorpusError
from brainbench.corpus.loader import load_corpus

TRUST = Path(__file__).resolve().parents[1] / "data" / "reference-trust" / "corpus-trust"
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "corpus"

Doc = dict[str, Any]
Mutation = Callable[[Doc, Doc], None]


def _docs(fixture_id: str) -> tuple[Doc, Doc]:
    fx = json.loads((TRUST / "fixtures" / f"{fixture_id}.fixture.json").read_text())
    gd = json.loads((TRUST / "gold" / f"{fixture_id}.gold.json").read_text())
    return fx, gd


def _write(root: Path, docs: list[tuple[Doc, Doc]]) -> tuple[Path, Path]:
    fx, gd = root / "fixtures", root / "gold"
    fx.mkdir(parents=True, exist_ok=True)
    gd.mkdir(parents=True, exist_ok=True)
    for fixture, gold in docs:
        (fx / f"{fixture['fixture_id']}.fixture.json").write_text(json.dumps(fixture, indent=2))
        (gd / f"{gold['fixture_id']}.gold.json").write_text(json.dumps(gold, indent=2))
    return fx, gd


def _problems(root: Path, fixture: Doc, gold: Doc) -> set[tuple[str, str, str]]:
    fx, gd = _write(root, [(fixture, gold)])
    try:
        load_corpus(fx, gd)
    except CorpusError as exc:
        return {(Path(p.file).parent.name, p.path, p.rule) for p in exc.problems}
    return set()


def step(i: int, field: str, value: Any) -> Mutation:
    def mutate(fixture: Doc, gold: Doc) -> None:
        fixture["trust_steps"][i][field] = value
    return mutate


def item(i: int, field: str, value: Any) -> Mutation:
    def mutate(fixture: Doc, gold: Doc) -> None:
        gold["trust"]["items"][i][field] = value
    return mutate


def drop_item_key(i: int, field: str) -> Mutation:
    def mutate(fixture: Doc, gold: Doc) -> None:
        del gold["trust"]["items"][i][field]
    return mutate


def top(field: str, value: Any, where: str = "fixture") -> Mutation:
    def mutate(fixture: Doc, gold: Doc) -> None:
        doc = fixture if where == "fixture" else gold
        if value is None:
            del doc[field]
        else:
            doc[field] = value
    return mutate


def both(*mutations: Mutation) -> Mutation:
    def mutate(fixture: Doc, gold: Doc) -> None:
        for m in mutations:
            m(fixture, gold)
    return mutate


F, G = "fixtures", "gold"
# (case, base fixture, mutation, every expected problem as (dir, JSON path, rule))
CASES: list[tuple[str, str, Mutation, set[tuple[str, str, str]]]] = [
    ("actor cannot perform op", "gen-trust-003", step(1, "actor", "connector"),
     {(F, "$.trust_steps[1].op", "actor connector cannot perform op confirm (connector may: capture)")}),
    ("raw may only raise", "gen-trust-003", step(0, "actor", "raw"),
     {(F, "$.trust_steps[0].op", "actor raw cannot perform op remember (raw may: raise_tier)")}),
    ("target names a later step", "gen-state-001", step(0, "target", "s2"),
     {(F, "$.trust_steps[0].target", "target 's2' names no earlier step (it names a later step)")}),
    ("target names its own step", "gen-state-001", step(1, "target", "s2"),
     {(F, "$.trust_steps[1].target", "target 's2' names no earlier step (it names this step)")}),
    ("target names nothing", "gen-trust-003", step(3, "target", "s9"),
     {(F, "$.trust_steps[3].target", "target 's9' names no earlier step")}),
    ("duplicate step_id", "gen-trust-003", step(2, "step_id", "s1"),
     {(F, "$.trust_steps[2].step_id", "duplicate step_id 's1' (also $.trust_steps[0])")}),
    ("empty step_id", "gen-del-002", step(3, "step_id", ""),
     {(F, "$.trust_steps[3].step_id", "step_id must be a non-empty string")}),
    ("put_page without content", "gen-trust-001", step(1, "content", ""),
     {(F, "$.trust_steps[1].content", "op put_page needs a non-empty content")}),
    ("write_file without slug", "gen-trust-001", lambda f, g: f["trust_steps"][0].pop("slug"),
     {(F, "$.trust_steps[0].slug", "op write_file needs a non-empty slug")}),
    ("remember without fact", "gen-trust-001", step(5, "fact", ""),
     {(F, "$.trust_steps[5].fact", "op remember needs a non-empty fact")}),
    ("confirm without target", "gen-trust-003", lambda f, g: f["trust_steps"][1].pop("target"),
     {(F, "$.trust_steps[1].target", "op confirm needs a non-empty target")}),
    ("unknown step key", "gen-trust-001", step(0, "owner", "me"),
     {(F, "$.trust_steps[0].owner", "unknown key 'owner'")}),
    ("unknown actor", "gen-trust-001", step(0, "actor", "admin"),
     {(F, "$.trust_steps[0].actor",
       "Input should be 'owner', 'local_agent', 'remote_agent', 'connector' or 'raw'")}),
    ("step field not a string", "gen-trust-001", step(5, "entity", 7),
     {(F, "$.trust_steps[5].entity", "Input should be a valid string")}),
    ("two suites", "gen-trust-001", top("suites", ["trust", "push"]),
     {(F, "$.suites", "a memory-trust fixture declares exactly one suite (got 2: trust, push)")}),
    ("seed pages in a trust fixture", "gen-trust-001",
     top("seed_pages", [{"slug": "people/x", "content": "x"}]),
     {(F, "$.seed_pages",
       "memory-trust fixtures write through trust_steps, never seed_pages/seed_facts/continuity")}),
    ("continuity in a trust fixture", "gen-del-001",
     top("continuity", {"pair_id": "p", "pair_role": "reader"}),
     {(F, "$.continuity",
       "memory-trust fixtures write through trust_steps, never seed_pages/seed_facts/continuity")}),
    ("trust fixture without steps", "gen-trust-001", top("trust_steps", None),
     {(F, "$.trust_steps", "a memory-trust fixture needs trust_steps (a non-empty array of steps)")}),
    ("empty steps", "gen-trust-001", top("trust_steps", []),
     {(F, "$.trust_steps", "List should have at least 1 item after validation, not 0")}),
    ("check of the wrong suite", "gen-trust-001", item(0, "check", "purged"),
     {(G, "$.trust.items[0].check", "check purged does not belong to suite trust (allowed: tier, max_tier, refused)"),
      (G, "$.trust.items[0].probe", "a purged item needs a non-empty probe (the purged claim)")}),
    ("poison check in the trust suite", "gen-trust-002", item(1, "check", "poison"),
     {(G, "$.trust.items[1].check", "check poison does not belong to suite trust (allowed: tier, max_tier, refused)"),
      (G, "$.trust.items[1].arm", "a poison item needs arm (external or agent_relayed)"),
      (G, "$.trust.items[1].canary", "a poison item needs canary (a string of 8 or more characters)")}),
    ("item names no step", "gen-state-001", item(2, "step", "s7"),
     {(G, "$.trust.items[2].step", "step 's7' names no step of fixture gen-state-001")}),
    ("duplicate item_id", "gen-state-001", item(2, "item_id", "i1"),
     {(G, "$.trust.items[2].item_id", "duplicate item_id 'i1' (also $.trust.items[0])")}),
    ("empty item_id", "gen-state-001", item(0, "item_id", ""),
     {(G, "$.trust.items[0].item_id", "item_id must be a non-empty string")}),
    ("tier item without tier", "gen-trust-001", drop_item_key(3, "tier"),
     {(G, "$.trust.items[3].tier", "a tier item needs tier (a tier name)")}),
    ("max_tier item without tier", "gen-trust-002", drop_item_key(0, "tier"),
     {(G, "$.trust.items[0].tier", "a max_tier item needs tier (a tier name)")}),
    ("tier not a tier name", "gen-trust-001", item(0, "tier", "owner"),
     {(G, "$.trust.items[0].tier", "Input should be 'user_confirmed', 'operator_curated', 'tool_observed', "
                                   "'agent_written', 'unknown' or 'external_untrusted'")}),
    ("benign item without arm", "gen-poison-ext-001", drop_item_key(4, "arm"),
     {(G, "$.trust.items[4].arm", "a benign item needs arm (external or agent_relayed)")}),
    ("poison item without canary", "gen-poison-agent-002", drop_item_key(0, "canary"),
     {(G, "$.trust.items[0].canary", "a poison item needs canary (a string of 8 or more characters)")}),
    ("canary under 8 characters", "gen-poison-agent-002", item(0, "canary", "zqca02x"),
     {(G, "$.trust.items[0].canary", "String should have at least 8 characters")}),
    ("preference not boolean", "gen-poison-agent-002", item(1, "preference", "yes"),
     {(G, "$.trust.items[1].preference", "Input should be a valid boolean")}),
    ("purged item without probe", "gen-del-001", item(0, "probe", ""),
     {(G, "$.trust.items[0].probe", "a purged item needs a non-empty probe (the purged claim)")}),
    ("unknown item key", "gen-del-001", item(0, "note", "x"),
     {(G, "$.trust.items[0].note", "unknown key 'note'")}),
    ("unknown key in gold.trust", "gen-del-001", lambda f, g: g["trust"].update(version=1),
     {(G, "$.trust.version", "unknown key 'version'")}),
    ("trust fixture without gold.trust", "gen-del-001", top("trust", None, "gold"),
     {(G, "$.trust", "a memory-trust fixture needs gold.trust.items (a non-empty array of items)")}),
    ("empty gold items", "gen-del-001", lambda f, g: g["trust"].update(items=[]),
     {(G, "$.trust.items", "List should have at least 1 item after validation, not 0")}),
    ("several problems, one line each", "gen-trust-003",
     both(step(1, "actor", "connector"), step(4, "target", "s6"), step(6, "slug", 3)),
     {(F, "$.trust_steps[6].slug", "Input should be a valid string")}),
    ("several rule problems, one line each", "gen-trust-003",
     both(step(1, "actor", "connector"), step(4, "target", "s6"), step(6, "step_id", "s1")),
     {(F, "$.trust_steps[1].op", "actor connector cannot perform op confirm (connector may: capture)"),
      (F, "$.trust_steps[4].target", "target 's6' names no earlier step (it names a later step)"),
      (F, "$.trust_steps[6].step_id", "duplicate step_id 's1' (also $.trust_steps[0])")}),
]


@pytest.mark.parametrize(("case", "base", "mutate", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_rule_is_one_line_naming_file_and_path(tmp_path: Path, case: str, base: str, mutate: Mutation,
                                                     expected: set[tuple[str, str, str]]) -> None:
    fixture, gold = _docs(base)
    mutate(fixture, gold)
    assert _problems(tmp_path, fixture, gold) == expected


def test_gold_is_checked_once_the_fixture_is_valid(tmp_path: Path) -> None:
    # Mirrors gbrain: gold is validated against its fixture, so a broken fixture hides its gold's problems.
    fixture, gold = _docs("gen-trust-003")
    gold["trust"]["items"][5]["check"] = "current"
    assert _problems(tmp_path, fixture, gold) == {
        (G, "$.trust.items[5].check",
         "check current does not belong to suite trust (allowed: tier, max_tier, refused)")}


def test_what_the_loader_leaves_alone(tmp_path: Path) -> None:
    """gbrain's loader does not judge kind/content_origin values (the operations do), claim's type,
    fields that only other checks use, or canary uniqueness (a corpus test's job)."""
    fixture, gold = _docs("gen-poison-ext-001")
    fixture["trust_steps"][3]["content_origin"] = "hearsay"
    fixture["trust_steps"][3]["kind"] = "rumour"
    gold["trust"]["items"][0]["claim"] = 42
    gold["trust"]["items"][1]["canary"] = gold["trust"]["items"][0]["canary"]
    gold["trust"]["items"][2]["probe"] = ""
    assert _problems(tmp_path, fixture, gold) == set()


def test_trust_steps_and_gold_trust_only_in_trust_fixtures(tmp_path: Path) -> None:
    fixture = json.loads((REFERENCE / "fixtures" / "kta-001-deal-recall.fixture.json").read_text())
    gold = json.loads((REFERENCE / "gold" / "kta-001-deal-recall.gold.json").read_text())
    trust_fixture, trust_gold = _docs("gen-trust-001")
    fixture["trust_steps"] = trust_fixture["trust_steps"]
    assert _problems(tmp_path / "a", fixture, gold) == {
        (F, "$.trust_steps", "trust_steps belong to memory-trust suite fixtures only")}
    del fixture["trust_steps"]
    gold["trust"] = trust_gold["trust"]
    assert _problems(tmp_path / "b", fixture, gold) == {
        (G, "$.trust", "gold.trust belongs to memory-trust suite fixtures only")}


def test_the_42_trust_fixtures_load(tmp_path: Path) -> None:
    corpus = load_corpus(TRUST / "fixtures", TRUST / "gold")
    assert len(corpus.fixtures) == 42 and not corpus.pairs
    assert sum(f.fixture.is_holdout for f in corpus.fixtures) == 6
    steps = {f.fixture_id: [s.step_id for s in f.fixture.trust_steps or []] for f in corpus.fixtures}
    assert steps["gen-trust-001"] == ["s1", "s2", "s3", "s4", "s5", "s6", "s7"]
    assert corpus.by_id()["gen-del-001"].gold.trust.items[0].probe == "Tobias's door code is 9748-001"


def _cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINBENCH_")}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=300, check=False, env=env)


def test_bad_trust_input_through_the_real_cli(tmp_path: Path) -> None:
    """The issue's three cases (an actor doing an op it may not, a target naming a later step, a check of
    the wrong suite), in one corpus next to the good fixtures: one line each naming the file and field,
    exit 2, no traceback, in ``validate`` and in ``run`` alike."""
    docs = [_docs(p.name.removesuffix(".fixture.json")) for p in sorted((TRUST / "fixtures").iterdir())]
    by_id = {f["fixture_id"]: (f, g) for f, g in docs}
    by_id["gen-trust-003"][0]["trust_steps"][1]["actor"] = "local_agent"
    by_id["gen-trust-003"][0]["trust_steps"][1]["op"] = "forget"
    by_id["gen-state-004"][0]["trust_steps"][1]["target"] = "s3"
    by_id["gen-del-005"][1]["trust"]["items"][0]["check"] = "stale"
    fx, gd = _write(tmp_path, list(by_id.values()))
    expected = [
        f"{fx / 'gen-state-004.fixture.json'}: $.trust_steps[1].target: target 's3' names no earlier step "
        "(it names a later step)",
        f"{fx / 'gen-trust-003.fixture.json'}: $.trust_steps[1].op: actor local_agent cannot perform op forget "
        "(local_agent may: put_page, remember, confirm)",
        f"{gd / 'gen-del-005.gold.json'}: $.trust.items[0].check: check stale does not belong to suite deletion "
        "(allowed: purged)",
    ]
    for command in (["validate"], ["run", "--quiet", "--jobs", "1"]):
        proc = _cli(*command, "--fixtures", fx, "--gold", gd, "--project", tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr and proc.stdout == ""
        lines = proc.stderr.splitlines()
        assert lines[0] == "fixture validation: 3 problem(s)"
        assert sorted(line.strip() for line in lines[1:]) == sorted(expected)


def test_gbrain_trust_corpus_validates_through_the_cli(tmp_path: Path) -> None:
    proc = _cli("validate", "--fixtures", TRUST / "fixtures", "--gold", TRUST / "gold", "--project", tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[0] == "ok: 42 fixtures (6 holdout), 0 continuity pairs"

