"""The repo's copies of gbrain's reference material are exactly what their PROVENANCE.md says they are."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.mark.parametrize("name", ["reference", "reference-trust"])
def test_every_reference_file_matches_its_recorded_sum(name: str) -> None:
    root = DATA / name
    recorded = {}
    for line in (root / "SHA256SUMS").read_text().splitlines():
        digest, path = line.split(maxsplit=1)
        recorded[path] = digest
    present = {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}
    assert present - set(recorded) == {"SHA256SUMS", "PROVENANCE.md"}
    for path, digest in recorded.items():
        assert hashlib.sha256((root / path).read_bytes()).hexdigest() == digest, path
