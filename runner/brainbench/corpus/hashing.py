"""``fixtures_hash``: one SHA-256 over gold files then fixture files (spec §1.2)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path


def fixtures_hash(gold_files: Sequence[Path], fixture_files: Sequence[Path]) -> str:
    """Hash ``gold/<name>\\n`` + bytes for each gold file, then the same for fixtures.

    Both lists must already be in corpus (sorted-filename) order.  Holdout
    fixtures are included: holdout changes what is scored, not what was shipped.
    """
    digest = hashlib.sha256()
    for prefix, files in (("gold", gold_files), ("fixtures", fixture_files)):
        for path in files:
            digest.update(f"{prefix}/{path.name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()
