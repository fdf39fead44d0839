"""Fixtures for the generator tests; plain helpers live in gen_helpers.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gen_helpers import FIXTURES, REFERENCE, load_json


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    if not REFERENCE.is_dir():
        pytest.skip(f"reference material not found at {REFERENCE}")
    return REFERENCE


@pytest.fixture(scope="session")
def ledger() -> dict[str, Any]:
    return load_json(FIXTURES / "_ledger.json")
