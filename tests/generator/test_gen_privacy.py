"""Privacy lint: no real-looking amounts, no dates outside 2024–2026, no names outside the pools.

Hand-authored reference fixtures (Alice Example, Widget Co, …) are gbrain's interop files
and are exempt from the name check; amounts and dates are checked everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from brainbench.generator import generate_corpus
from brainbench.generator.universe import pool_vocabulary
from gen_helpers import FIXTURES, GOLD, load_json

ALL_FILES = sorted([*FIXTURES.glob("*.json"), *GOLD.glob("*.json")])
GEN_FILES = [p for p in ALL_FILES if p.name.startswith("gen-")]

# Ordinary capitalized words the templates use (sentence starts, weekdays, acronyms).
# Anything capitalized that is neither here nor in the generator's name pools fails.
ALLOWED_WORDS = frozenset("""
A ALL APPROVED Agreed Ahead Also And Any Anything Apparently B Back Before CEO Can Candidate Carbon Catch
Clinical Coffee Committed Company Decided Developer Did Do Field Finished For Found Founded Founder Freight
Friday Give Good Got Great Grid Had Happy Has Heading How I I'm IGNORE INSTRUCTIONS Insurance Is Just Keep Lab
Monday Morning No Noted Nothing On PREVIOUS Partner Payroll Perfect Ping Pretty Pull Put Quick Remind Retail SOC
Series Skip Soil Someone Sounds Status Sure Team Team-brain-only Thanks The There Thursday Traffic Tuesday
Venture Warehouse We Wednesday What Where Which Who Worth You Your
API Always CC CFO COO CTO Draft Facts From Ignore New Newsletter Please Reminder Send Tidied When
""".split())

_AMOUNT = re.compile(r"\$\s*\d")
# A trust fixture's door code (``1824-002``: four digits, dash, the fixture number) is not a year.
_YEAR = re.compile(r"(?<![0-9])(1[89]\d\d|2\d\d\d)(?![0-9])(?!-\d{3}(?!\d))")
_CAP = re.compile(r"[A-Z][A-Za-z'’-]*")


def _strings(node: Any, key: str = "") -> list[tuple[str, str]]:
    if isinstance(node, str):
        return [(key, node)]
    if isinstance(node, dict):
        return [s for k, v in node.items() for s in _strings(v, k)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v, key)]
    return []


def lint(doc: Any, check_names: bool) -> list[str]:
    problems = []
    for key, text in _strings(doc):
        if _AMOUNT.search(text):
            problems.append(f"amount in {text!r}")
        # A content hash is hex: any four digits in it are not a year.
        for m in ([] if key.endswith("_hash") else _YEAR.finditer(text)):
            if not 2024 <= int(m.group(1)) <= 2026:
                problems.append(f"year {m.group(1)} in {text!r}")
        if check_names and key != "ts" and key != "slug" and key != "entity_slug":
            for m in _CAP.finditer(text):
                token = re.sub(r"['’]s$", "", m.group(0))
                if token not in pool_vocabulary() and token not in ALLOWED_WORDS:
                    problems.append(f"unknown capitalized word {token!r} in {text!r}")
    return problems


@pytest.mark.parametrize("path", ALL_FILES, ids=[p.name for p in ALL_FILES])
def test_committed_file_is_clean(path: Path) -> None:
    assert lint(load_json(path), check_names=path.name.startswith("gen-")) == []


def test_seed_page_titles_come_from_pools() -> None:
    vocab = pool_vocabulary()
    for path in GEN_FILES:
        doc = load_json(path)
        for page in doc.get("seed_pages", []):
            (title,) = re.findall(r"^title: (.*)$", page["content"], re.MULTILINE)
            assert all(tok in vocab for tok in title.split()), title


@pytest.mark.parametrize("seed", [1, 7, 2026])
def test_other_seeds_are_clean(seed: int) -> None:
    for f in generate_corpus(seed).fixtures:
        assert lint(f.fixture, True) == [] and lint(f.gold, True) == [], f.fixture_id


@pytest.mark.parametrize("seed", [1, 42, 2026])
def test_trust_categories_of_our_universe_are_clean(seed: int) -> None:
    for f in generate_corpus(seed, trust="ours").fixtures[-42:]:
        assert lint(f.fixture, True) == [] and lint(f.gold, True) == [], f.fixture_id


def test_lint_catches_violations() -> None:
    assert lint({"text": "MRR hit $50M"}, False)
    assert lint({"text": "back in 2019"}, False)
    assert lint({"ts": "2019-03-01T10:00:00Z"}, False)
    assert not lint({"text": "Romilly's door code is 2225-005"}, False)
    assert lint({"text": "Met John Smith today"}, True)
    assert not lint({"text": "Ping Gideon Vexley on Friday in 2025"}, True)
