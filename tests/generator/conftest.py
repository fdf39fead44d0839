"""Fixtures for the generator tests; plain helpers live in gen_helpers.py."""

from __future__ import annotations

from typing import Any

import pytest
from gen_helpers import FIXTURES, load_json


@pytest.fixture(scope="session")
def ledger() -> dict[str, Any]:
    return load_json(FIXTURES / "_ledger.json")
