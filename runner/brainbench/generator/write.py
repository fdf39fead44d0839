"""Serialization and the on-disk layout of the generated corpus.

Bytes are ``json.dumps(x, indent=2, ensure_ascii=False) + "\\n"`` of dicts built in the
published key order — the same bytes as JavaScript's ``JSON.stringify(x, null, 2)``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from brainbench.generator.corpus import Corpus

GENERATED_PREFIX = "gen-"
FIXTURE_SUFFIX = ".fixture.json"
GOLD_SUFFIX = ".gold.json"
LEDGER_NAME = "_ledger.json"


def dumps(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False) + "\n"


def rendered_files(corpus: Corpus) -> dict[str, str]:
    """Relative path ('fixtures/…' or 'gold/…') -> file text, for every generated file."""
    out: dict[str, str] = {}
    for f in corpus.fixtures:
        out[f"fixtures/{f.fixture_id}{FIXTURE_SUFFIX}"] = dumps(f.fixture)
        out[f"gold/{f.fixture_id}{GOLD_SUFFIX}"] = dumps(f.gold)
    return out


def _is_generated(path: Path, suffix: str) -> bool:
    return path.name.startswith(GENERATED_PREFIX) and path.name.endswith(suffix)


def remove_generated(fixtures_dir: Path, gold_dir: Path) -> int:
    """Delete only ``gen-*`` fixture/gold files; hand-authored files are never touched."""
    removed = 0
    for d, suffix in ((fixtures_dir, FIXTURE_SUFFIX), (gold_dir, GOLD_SUFFIX)):
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.is_file() and _is_generated(p, suffix):
                p.unlink()
                removed += 1
    return removed


def write_corpus(corpus: Corpus, fixtures_dir: Path, gold_dir: Path) -> list[Path]:
    fixtures_dir.mkdir(parents=True, exist_ok=True)
    gold_dir.mkdir(parents=True, exist_ok=True)
    remove_generated(fixtures_dir, gold_dir)
    written: list[Path] = []
    roots = {"fixtures": fixtures_dir, "gold": gold_dir}
    for rel, text in rendered_files(corpus).items():
        top, name = rel.split("/", 1)
        path = roots[top] / name
        # newline="" keeps "\n" on every platform: the bytes are part of fixtures_hash.
        with path.open("w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        written.append(path)
    return written
