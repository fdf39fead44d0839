"""The repo's copy of gbrain 0.60's trust corpus is exactly what its PROVENANCE.md says."""

from __future__ import annotations

import hashlib

from .conftest import TRUST_DATA


def test_every_trust_reference_file_matches_its_recorded_sum() -> None:
    recorded = dict(reversed(line.split(maxsplit=1)) for line in (TRUST_DATA / "SHA256SUMS").read_text().splitlines())
    present = {str(p.relative_to(TRUST_DATA)) for p in TRUST_DATA.rglob("*") if p.is_file()}
    assert present - set(recorded) == {"SHA256SUMS", "PROVENANCE.md"}
    assert len([n for n in recorded if n.startswith("fixtures/")]) == 42
    for name, digest in recorded.items():
        assert hashlib.sha256((TRUST_DATA / name).read_bytes()).hexdigest() == digest, name
