"""Paths and small helpers shared by the generator tests (unique module name on purpose)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "fixtures"
GOLD = REPO / "gold"
# gbrain's published reference (schemas, hand-authored fixtures), copied into the repo.
REFERENCE = REPO / "tests" / "data" / "reference"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def committed_pairs() -> list[tuple[Path, Path]]:
    """(fixture file, gold file) for every committed fixture, joined by fixture_id."""
    gold_by_id = {load_json(p)["fixture_id"]: p for p in sorted(GOLD.glob("*.gold.json"))}
    return [(p, gold_by_id[load_json(p)["fixture_id"]]) for p in sorted(FIXTURES.glob("*.fixture.json"))]
