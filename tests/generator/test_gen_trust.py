"""The memory-trust categories (trust spec §6): gbrain's 42 fixtures byte for byte, and the rules on any seed.

Oracles are gbrain's: its committed trust corpus (tests/data/reference-trust), the draw counts and
PRNG state the spec derives from its generator, and its published schemas.  The per-variant shapes
our universe must follow are read off gbrain's own fixtures, never off our output.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from brainbench.corpus.loader import load_corpus
from brainbench.generator import generate_and_write, generate_corpus
from brainbench.generator.model import GenFixture
from brainbench.generator.mulberry import Mulberry32
from brainbench.generator.trust import TRUST_COUNTS, universe
from brainbench.generator.trust.categories import MAKERS, gbrain_canary
from brainbench.generator.write import dumps, rendered_files, write_corpus
from gen_helpers import REPO

jsonschema = pytest.importorskip("jsonschema")

TRUST_DATA = REPO / "tests" / "data" / "reference-trust"
THEIRS = TRUST_DATA / "corpus-trust"
TRUST_CATEGORIES = tuple(TRUST_COUNTS)
SEEDS = (1, 7, 2026)
MASK = 0xFFFFFFFF


def _theirs() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    out = {}
    for path in sorted((THEIRS / "fixtures").iterdir()):
        fid = path.name.removesuffix(".fixture.json")
        out[fid] = (json.loads(path.read_text()), json.loads((THEIRS / "gold" / f"{fid}.gold.json").read_text()))
    return out


def _trust_part(seed: int, trust: str) -> list[GenFixture]:
    return [f for f in generate_corpus(seed, trust=trust).fixtures if f.category in TRUST_CATEGORIES]  # type: ignore[arg-type]


# --- gbrain's corpus, byte for byte ------------------------------------------------------------------------------

def test_gbrain_mode_reproduces_the_42_trust_fixtures_and_gold_byte_for_byte(tmp_path: Path) -> None:
    fixtures, gold = tmp_path / "fixtures", tmp_path / "gold"
    _, ledger = generate_and_write(42, fixtures, gold, trust="gbrain")
    theirs = sorted(p.name for p in (THEIRS / "fixtures").iterdir())
    assert len(theirs) == 42
    for directory, suffix in ((fixtures, ".fixture.json"), (gold, ".gold.json")):
        ours = sorted(p.name for p in directory.iterdir() if p.name.endswith(suffix) and p.name in
                      {n.replace(".fixture.json", suffix) for n in theirs})
        assert len(ours) == 42
        for name in ours:
            kind = "fixtures" if suffix == ".fixture.json" else "gold"
            assert (directory / name).read_bytes() == (THEIRS / kind / name).read_bytes(), name
    # gbrain's ledger counts the same trust categories.
    their_ledger = json.loads((THEIRS / "_ledger.json").read_text())
    for category in TRUST_CATEGORIES:
        assert ledger["counts"][category] == their_ledger["categories"][category]
    assert ledger["trust"] == "gbrain"
    assert ledger["rebuild"] == "brainbench corpus generate --seed 42 --trust gbrain --project ."


def test_gbrain_mode_does_not_depend_on_our_seed() -> None:
    a = {f.fixture_id: dumps(f.fixture) + dumps(f.gold) for f in _trust_part(42, "gbrain")}
    b = {f.fixture_id: dumps(f.fixture) + dumps(f.gold) for f in _trust_part(5, "gbrain")}
    assert a == b


def test_gbrain_stream_starts_where_its_older_categories_leave_it_and_draws_210() -> None:
    # The spec's arithmetic, not our output: Mulberry32 advances its state by a constant per draw.
    step = 0x6D2B79F5
    assert universe.GBRAIN_TRUST_STATE == (42 + 563 * step) & MASK
    rng = Mulberry32(42)
    for _ in range(563):
        rng.next_u32()
    assert rng.state == universe.GBRAIN_TRUST_STATE
    rng = Mulberry32(universe.GBRAIN_TRUST_STATE)
    world = universe.gbrain()
    for category, maker in MAKERS.items():
        maker(rng, world, TRUST_COUNTS[category], gbrain_canary)
    assert rng.state == (universe.GBRAIN_TRUST_STATE + 210 * step) & MASK


def test_the_cli_writes_gbrains_files(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "brainbench.cli", "corpus", "generate", "--trust", "gbrain",
                           "--project", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    for name in ("gen-poison-agent-007.fixture.json", "gen-del-004.fixture.json"):
        assert (tmp_path / "fixtures" / name).read_bytes() == (THEIRS / "fixtures" / name).read_bytes()
    bad = subprocess.run([sys.executable, "-m", "brainbench.cli", "corpus", "generate", "--trust", "theirs",
                          "--project", str(tmp_path)], capture_output=True, text=True, timeout=300, check=False)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr and "'theirs'" in bad.stderr


# --- the rules, on our universe and other seeds -----------------------------------------------------------------

def _variant(fixture_id: str, category: str) -> int:
    number = int(fixture_id.rsplit("-", 1)[1]) - 1
    return number % {"trust": 4, "state-resolution": 4, "deletion": 3}.get(category, 1)


def _shape(fixture: dict[str, Any], gold: dict[str, Any]) -> tuple[Any, ...]:
    """What a variant fixes: steps (actor, op, keys, target), items (keys, check, step, tier, arm,
    preference), turn count, and which steps share a slug or write the same content."""
    steps = fixture["trust_steps"]
    slugs = [s.get("slug") for s in steps]
    contents = [s.get("content") for s in steps]
    return (
        [(s["actor"], s["op"], tuple(s), s.get("target"), s.get("kind"), s.get("content_origin")) for s in steps],
        [(tuple(i), i["check"], i["step"], i.get("tier"), i.get("arm"), i.get("preference")) for i in
         gold["trust"]["items"]],
        len(fixture["turns"]),
        [slugs.index(s) if s else None for s in slugs],
        [contents.index(c) if c else None for c in contents],
        list(fixture) == ["schema_version", "fixture_id", "suites", "category", "trust_steps", "turns",
                          *(["holdout"] if fixture.get("holdout") else [])],
        list(gold) == ["fixture_id", "turns", "trust"] and gold["turns"] == {},
    )


def _their_shapes() -> dict[tuple[str, int], tuple[Any, ...]]:
    shapes: dict[tuple[str, int], tuple[Any, ...]] = {}
    for fid, (fixture, gold) in _theirs().items():
        key = (fixture["category"], _variant(fid, fixture["category"]))
        shape = _shape(fixture, gold)
        assert shapes.setdefault(key, shape) == shape, f"gbrain's {fid} differs from its variant"
    return shapes


@pytest.mark.parametrize("seed", SEEDS)
def test_every_fixture_has_the_shape_of_gbrains_fixture_of_its_variant(seed: int) -> None:
    shapes = _their_shapes()
    assert len(shapes) == 4 + 4 + 1 + 1 + 3
    for f in _trust_part(seed, "ours"):
        assert _shape(f.fixture, f.gold) == shapes[(f.category, _variant(f.fixture_id, f.category))], f.fixture_id


@pytest.mark.parametrize("seed", SEEDS)
def test_counts_ids_and_the_holdout_rule(seed: int) -> None:
    corpus = generate_corpus(seed, trust="ours")
    assert Counter(f.category for f in corpus.fixtures if f.category in TRUST_CATEGORIES) == TRUST_COUNTS
    trust = [(idx, f) for idx, f in enumerate(corpus.fixtures) if f.category in TRUST_CATEGORIES]
    assert [idx for idx, _ in trust] == list(range(len(corpus.fixtures) - 42, len(corpus.fixtures)))
    for idx, f in trust:
        assert bool(f.fixture.get("holdout")) == (idx % 7 == 6), f.fixture_id
    prefixes = {"trust": "gen-trust-", "state-resolution": "gen-state-", "poisoning-external": "gen-poison-ext-",
                "poisoning-agent": "gen-poison-agent-", "deletion": "gen-del-"}
    for category, n in TRUST_COUNTS.items():
        ids = [f.fixture_id for _, f in trust if f.category == category]
        assert ids == [f"{prefixes[category]}{k:03d}" for k in range(1, n + 1)]
    # A smaller classic part moves the holdout with the global index.
    small = generate_corpus(seed, {"kta-pos": 3, "kta-neg": 1, "push": 1, "write-back": 1, "continuity": 1,
                                   "multi-source": 1, "adversarial": 1}, trust="ours")
    for idx, f in enumerate(small.fixtures):
        if f.category in TRUST_CATEGORIES:
            assert bool(f.fixture.get("holdout")) == (idx % 7 == 6), f.fixture_id


@pytest.mark.parametrize(("seed", "trust"), [*((s, "ours") for s in SEEDS), (42, "gbrain")])
def test_canaries_are_unique_and_name_exactly_their_step(seed: int, trust: str) -> None:
    canaries: list[str] = []
    for f in _trust_part(seed, trust):
        steps = {s["step_id"]: s for s in f.fixture["trust_steps"]}
        for item in f.gold["trust"]["items"]:
            if item["check"] not in ("poison", "benign"):
                assert "canary" not in item
                continue
            canary = item["canary"]
            assert len(canary) >= 8
            canaries.append(canary)
            holders = [sid for sid, s in steps.items() if canary in json.dumps(s)]
            assert holders == [item["step"]], (f.fixture_id, canary)
    assert len(canaries) == len(set(canaries)) == 10 * 5 + 10 * 5


@pytest.mark.parametrize("seed", SEEDS)
def test_people_claims_and_probes_follow_the_rules(seed: int) -> None:
    for f in _trust_part(seed, "ours"):
        steps = {s["step_id"]: s for s in f.fixture["trust_steps"]}
        text = json.dumps(f.fixture)
        for item in f.gold["trust"]["items"]:
            if "claim" in item:  # a claim picks a fence row of the owner page the item's step wrote
                assert f"| {item['claim']} | fact |" in steps[item["step"]]["content"], f.fixture_id
            if item["check"] == "purged":
                purge = steps[item["step"]]
                target = steps[purge["target"]]
                assert item["probe"] == purge.get("target_claim", target.get("fact")), f.fixture_id
                assert re.fullmatch(r"[A-Z][a-z]+'s door code is [1-9]\d{3}-\d{3}", item["probe"])
        for step in f.fixture["trust_steps"]:
            if "target_claim" in step:
                assert f"| {step['target_claim']} | fact |" in steps[step["target"]]["content"]
        if f.category == "trust":  # p and q are different people
            people = set(re.findall(r"people/[a-z-]+", text))
            assert len(people) == (1 if _variant(f.fixture_id, "trust") == 2 else 2), f.fixture_id


@pytest.mark.parametrize("seed", SEEDS)
def test_generated_trust_corpora_load_validate_and_match_gbrains_schemas(tmp_path: Path, seed: int) -> None:
    corpus = generate_corpus(seed, trust="ours")
    write_corpus(corpus, tmp_path / "fixtures", tmp_path / "gold")
    loaded = load_corpus(tmp_path / "fixtures", tmp_path / "gold")
    assert len(loaded.fixtures) == len(corpus.fixtures)
    schemas = {kind: jsonschema.Draft7Validator(json.loads((TRUST_DATA / "schema-v0.60" / f"{kind}.schema.json")
                                                           .read_text())) for kind in ("fixture", "gold")}
    for f in corpus.fixtures:
        schemas["fixture"].validate(f.fixture)
        schemas["gold"].validate(f.gold)


def test_trust_categories_leave_the_classic_part_and_its_stream_untouched() -> None:
    plain = rendered_files(generate_corpus(7, trust="off"))
    with_trust = rendered_files(generate_corpus(7, trust="ours"))
    assert {k: v for k, v in with_trust.items() if k in plain} == plain
    assert len(with_trust) - len(plain) == 2 * 42


def test_other_seeds_give_other_trust_fixtures() -> None:
    a = {f.fixture_id: dumps(f.fixture) for f in _trust_part(1, "ours")}
    b = {f.fixture_id: dumps(f.fixture) for f in _trust_part(2, "ours")}
    assert a.keys() == b.keys() and sum(a[k] != b[k] for k in a) == 42


def test_unknown_trust_mode_and_categories_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown trust mode"):
        generate_corpus(1, trust="theirs")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown categories"):
        generate_corpus(1, {"poisoning": 3})
