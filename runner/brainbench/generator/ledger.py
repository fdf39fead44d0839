"""The corpus ledger ``fixtures/_ledger.json`` and the corpus hash (spec §1.2, §12.1).

The loader ignores the ledger (it does not end in ``.fixture.json``), so the ledger is
not part of ``fixtures_hash``; it records that hash instead.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from brainbench.generator.corpus import GENERATOR_NAME, GENERATOR_VERSION, Corpus
from brainbench.generator.write import FIXTURE_SUFFIX, GOLD_SUFFIX, LEDGER_NAME, dumps, rendered_files

CORPUS_NAME = "brainbench-corpus"
VALIDATION_METHOD = (
    "double-label: an independent reviewer labels a stratified sample (brainbench corpus sample) "
    "without seeing gold; brainbench corpus check-labels compares each labelled user turn with the "
    "sealed gold (agree = same should_retrieve and, when retrieving, reviewer slugs non-empty, inside "
    "gold+acceptable and hitting gold)"
)


def fixtures_hash(fixtures_dir: Path, gold_dir: Path) -> str:
    """SHA-256 over gold files then fixture files, each as ``<dir>/<name>\\n`` + raw bytes.

    Mirrors spec §1.2; the lead's loader owns the canonical implementation and a test
    pins that both agree.
    """
    h = hashlib.sha256()
    for label, d, suffix in (("gold", gold_dir, GOLD_SUFFIX), ("fixtures", fixtures_dir, FIXTURE_SUFFIX)):
        names = sorted(p.name for p in d.iterdir() if p.is_file() and p.name.endswith(suffix))
        for name in names:
            h.update(f"{label}/{name}\n".encode())
            h.update((d / name).read_bytes())
    return h.hexdigest()


def generated_gold_hash(corpus: Corpus, *, reviewed_only: bool = False) -> str:
    """Hash of the generated gold only.  ``reviewed_only``: of the gold a label review reads (the
    retrieval turns of the classic categories; memory-trust gold has no turns to label), so a review
    stays valid while that is unchanged, whatever trust categories are added."""
    skip = {f"gold/{f.fixture_id}{GOLD_SUFFIX}" for f in corpus.fixtures
            if reviewed_only and "trust_steps" in f.fixture}
    h = hashlib.sha256()
    for rel, text in sorted(rendered_files(corpus).items()):
        if rel.startswith("gold/") and rel not in skip:
            h.update(f"{rel}\n".encode())
            h.update(text.encode())
    return h.hexdigest()


def pending_validation() -> dict[str, Any]:
    return {"method": VALIDATION_METHOD, "status": "pending", "sample": None, "agreement": None,
            "date": None}


def build_ledger(corpus: Corpus, fixtures_dir: Path, gold_dir: Path, rebuild: str,
                 previous: dict[str, Any] | None = None) -> dict[str, Any]:
    counts: dict[str, int] = {}
    holdout: dict[str, int] = {}
    gold_turns = 0
    for f in corpus.fixtures:
        counts[f.category] = counts.get(f.category, 0) + 1
        if f.fixture.get("holdout"):
            holdout[f.category] = holdout.get(f.category, 0) + 1
        gold_turns += len(f.gold["turns"])
    hand = sorted(p.name[: -len(FIXTURE_SUFFIX)] for p in fixtures_dir.iterdir()
                  if p.name.endswith(FIXTURE_SUFFIX) and not p.name.startswith("gen-"))
    gold_hash = generated_gold_hash(corpus)
    reviewed_hash = generated_gold_hash(corpus, reviewed_only=True)
    validation = pending_validation()
    if previous is not None:
        prev = previous.get("gold_validation")
        # A recorded review stays attached only while the gold it was computed on is unchanged.
        if isinstance(prev, dict) and prev.get("gold_hash") == reviewed_hash:
            validation = prev
    # Named only when present, so a classic-only corpus keeps its ledger byte for byte.
    trust = {"trust": corpus.trust} if corpus.trust != "off" else {}
    return {
        "name": CORPUS_NAME,
        "generator": GENERATOR_NAME,
        "version": GENERATOR_VERSION,
        "seed": corpus.seed,
        **trust,
        "generated_fixtures": len(corpus.fixtures),
        "counts": counts,
        "holdout": sum(holdout.values()),
        "holdout_by_category": holdout,
        "gold_turns": gold_turns,
        "hand_authored_fixtures": hand,
        "rebuild": rebuild,
        "generated_gold_hash": gold_hash,
        **({"reviewed_gold_hash": reviewed_hash} if reviewed_hash != gold_hash else {}),
        "fixtures_hash": fixtures_hash(fixtures_dir, gold_dir),
        "gold_validation": validation,
    }


def read_ledger(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else None


def write_ledger(path: Path, ledger: dict[str, Any]) -> None:
    with path.open("w", encoding="utf-8", newline="") as fh:
        fh.write(dumps(ledger))


def ledger_path(fixtures_dir: Path) -> Path:
    return fixtures_dir / LEDGER_NAME
