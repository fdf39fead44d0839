"""The repo's copy of gbrain's reference material is exactly what PROVENANCE.md says it is."""

from __future__ import annotations

import hashlib
from pathlib import Path

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


def test_every_reference_file_matches_its_recorded_sum() -> None:
    recorded = {}
    for line in (REFERENCE / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split(maxsplit=1)
        recorded[name] = digest
    present = {str(p.relative_to(REFERENCE)) for p in REFERENCE.rglob("*") if p.is_file()}
    assert present - set(recorded) == {"SHA256SUMS", "PROVENANCE.md"}
    for name, digest in recorded.items():
        assert hashlib.sha256((REFERENCE / name).read_bytes()).hexdigest() == digest, name
