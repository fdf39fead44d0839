"""Each category's trap fires as intended on the real seams (spec §12.6).

One real run (embedded Postgres, all three seams, holdout included) over the committed
generated fixtures; assertions read the per-turn rows and cells. Budget effects only show
here: openclaw keeps 3 pointers and codex 1 fragment; claude-code volunteers the rest, and so does
openclaw under gbrain 0.60's behaviour (its volunteer arm), the release this run follows.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from typing import Any

import pytest
from brainbench.generator import generate_corpus
from gen_helpers import FIXTURES, GOLD

pytestmark = pytest.mark.timeout(1200)

HARNESSES = ("openclaw", "claude-code", "codex")
GEN = {f.fixture_id: f for f in generate_corpus(42).fixtures}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from brainbench.corpus.loader import load_corpus
    from brainbench.models.config import RunConfig
    from brainbench.pipeline import run_benchmark

    root = tmp_path_factory.mktemp("corpus")
    for src, dst in ((FIXTURES, root / "fixtures"), (GOLD, root / "gold")):
        dst.mkdir()
        for p in src.glob("gen-*.json"):
            shutil.copy(p, dst / p.name)
    corpus = load_corpus(root / "fixtures", root / "gold")
    config = RunConfig(fixtures_dir=root / "fixtures", gold_dir=root / "gold", include_holdout=True,
                       behaviour="0.60")
    # The embedded server is a dependency of the package: a failure here is a failure, never a skip.
    result = run_benchmark(config, corpus).to_json_dict()
    assert result["seed_failures"] == []
    rows: dict[tuple[str, str, int, str], dict] = {}
    for r in result["turn_rows"]:
        rows[(r["harness"], r["fixture_id"], r["turn_id"], r["suite"])] = r
    cells = {(c["harness"], c["suite"]): c for c in result["cells"]}
    return {"rows": rows, "cells": cells}


def _injected(run: dict, harness: str, fixture_id: str, turn_id: int) -> list[str]:
    return run["rows"][(harness, fixture_id, turn_id, "know-to-ask")]["injected_slugs"]


def _of(category: str, kind: str | None = None) -> list:
    return [f for f in GEN.values() if f.category == category and (kind is None or f.kind == kind)]


def test_know_to_ask_has_no_misses_and_no_false_fires(run: dict) -> None:
    for h in HARNESSES:
        cell = run["cells"][(h, "know-to-ask")]
        assert cell["gold_failed"] == 0, h
        assert cell["metrics"]["source_isolation_violations"] == 0


@pytest.mark.parametrize("harness", HARNESSES)
def test_kta_pos_every_arm_fires(run: dict, harness: str) -> None:
    for f in _of("kta-pos"):
        gold = f.gold["turns"]["1"]["gold_slugs"]
        assert set(_injected(run, harness, f.fixture_id, 1)) & set(gold), (f.fixture_id, f.kind)
        assert _injected(run, harness, f.fixture_id, 3) == []


@pytest.mark.parametrize("harness", HARNESSES)
def test_kta_neg_stays_silent(run: dict, harness: str) -> None:
    for f in _of("kta-neg"):
        assert _injected(run, harness, f.fixture_id, 1) == [] == _injected(run, harness, f.fixture_id, 3)


def test_push_budget_overflow_shows_in_recall(run: dict) -> None:
    oc, cc, cx = (run["cells"][(h, "push")] for h in HARNESSES)
    assert cx["metrics"]["push_recall"] < 1
    # The volunteer layers (claude-code's, and openclaw's under 0.60) recover the 4th entity.
    assert cc["metrics"]["push_recall"] == 1 == oc["metrics"]["push_recall"]
    for c in (oc, cc, cx):
        assert c["metrics"]["push_precision"] == 1
    for f in _of("push"):
        gold = set(f.gold["turns"]["1"]["gold_slugs"])
        codex = run["rows"][("codex", f.fixture_id, 1, "push")]["injected_slugs"]
        openclaw = run["rows"][("openclaw", f.fixture_id, 1, "push")]["injected_slugs"]
        assert len(codex) == 1 and len(gold - set(codex)) >= 2
        assert len(openclaw) > 3  # 3 pointers, then what the volunteer arm adds
        for h in HARNESSES:
            assert run["rows"][(h, f.fixture_id, 3, "push")]["injected_slugs"] == []


def test_multi_source_canary_never_injected(run: dict) -> None:
    for f in _of("multi-source"):
        canary = next(p["slug"] for p in f.fixture["seed_pages"]
                      if p.get("source_id") == "teambrain" and p["slug"].startswith("companies/"))
        for h in HARNESSES:
            for suite in ("know-to-ask", "push"):
                for turn in (1, 2):
                    row = run["rows"][(h, f.fixture_id, turn, suite)]
                    assert canary not in row["injected_slugs"] and row["cross_source_slugs"] == []
            assert _injected(run, h, f.fixture_id, 1) == f.gold["turns"]["1"]["gold_slugs"]


@pytest.mark.parametrize("harness", HARNESSES)
def test_adversarial_traps(run: dict, harness: str) -> None:
    for f in _of("adversarial"):
        first, third = _injected(run, harness, f.fixture_id, 1), _injected(run, harness, f.fixture_id, 3)
        if f.kind == "suppression":
            assert first == f.gold["turns"]["1"]["gold_slugs"] and third == [], f.fixture_id
        elif f.kind == "near-miss":
            assert first == [] == third, f.fixture_id
        elif f.kind in ("stale", "injection"):
            assert first == f.gold["turns"]["1"]["gold_slugs"] and third == [], f.fixture_id
        else:  # ambiguous: the shared first name is silent, the full name resolves
            g3 = f.gold["turns"]["3"]
            assert first == [], f.fixture_id
            # codex's single fragment may carry the acceptable org page instead (content_hash order).
            assert third and set(third) <= set(g3["gold_slugs"]) | set(g3["acceptable_slugs"]), f.fixture_id
            if harness != "codex":
                assert g3["gold_slugs"][0] in third, f.fixture_id


def test_write_back_gap_keeps_every_fact(run: dict) -> None:
    facts = sum(len(g.get("gold_facts", [])) for f in GEN.values() for g in f.gold["turns"].values())
    for h in HARNESSES:
        cell = run["cells"][(h, "write-back")]
        assert cell["gold_total"] == facts and cell["gold_failed"] == 0
        assert cell["metrics"] == {"write_back_fidelity": 1, "provenance_accuracy": 1}


def test_continuity_pairs_recall(run: dict) -> None:
    pairs = defaultdict(set)
    for f in _of("continuity"):
        pairs[f.unit].add(f.kind.split("-")[0])
    for h in HARNESSES:
        cell = run["cells"][(h, "continuity")]
        assert cell["gold_total"] == len(pairs) and cell["gold_failed"] == 0
