"""Issue 30's reference data: inputs (cases.json) and what gbrain's code made of them (expected.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[1] / "data" / "fidelity30"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


CASES = load("cases.json")
EXPECTED = load("expected.json")


def paired(section: str) -> list[tuple[Any, Any]]:
    """(input, gbrain's output) for every case of one section."""
    assert len(CASES[section]) == len(EXPECTED[section]), section
    return list(zip(CASES[section], EXPECTED[section], strict=True))
