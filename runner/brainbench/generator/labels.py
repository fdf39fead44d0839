"""check-labels: agreement of an independent review with the sealed gold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from brainbench.generator.ledger import VALIDATION_METHOD, read_ledger, write_ledger


def _turn_agrees(label: dict[str, Any], gold: dict[str, Any]) -> bool:
    if bool(label.get("should_retrieve")) != bool(gold.get("should_retrieve")):
        return False
    if not gold.get("should_retrieve"):
        return True
    slugs = set(label.get("slugs") or [])
    gold_slugs = set(gold.get("gold_slugs") or [])
    allowed = gold_slugs | set(gold.get("acceptable_slugs") or [])
    # Continuity readers / fact turns may retrieve without slugs in gold; then only the
    # retrieve decision is compared.
    if not gold_slugs:
        return True
    return bool(slugs) and slugs <= allowed and bool(slugs & gold_slugs)


def _kappa(pairs: list[tuple[bool, bool]]) -> float | None:
    n = len(pairs)
    if n == 0:
        return None
    po = sum(a == b for a, b in pairs) / n
    pa = sum(a for a, _ in pairs) / n
    pb = sum(b for _, b in pairs) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe == 1 else round((po - pe) / (1 - pe), 4)


def check_labels(review: dict[str, Any], gold_dir: Path) -> dict[str, Any]:
    gold_by_id: dict[str, dict[str, Any]] = {}
    for p in sorted(gold_dir.glob("*.gold.json")):
        g = json.loads(p.read_text(encoding="utf-8"))
        gold_by_id[g["fixture_id"]] = g
    compared = agreed = 0
    unlabelled = 0
    pairs: list[tuple[bool, bool]] = []
    disagreements: list[str] = []
    for item in review.get("items", []):
        gold = gold_by_id.get(item["fixture_id"])
        if gold is None:
            raise ValueError(f"review names unknown fixture {item['fixture_id']}")
        for turn_id, label in sorted(item.get("labels", {}).items(), key=lambda kv: int(kv[0])):
            g = gold["turns"].get(turn_id)
            if g is None:
                continue  # turns without gold are not scored anywhere
            if label.get("should_retrieve") is None:
                unlabelled += 1
                continue
            compared += 1
            pairs.append((bool(label["should_retrieve"]), bool(g["should_retrieve"])))
            if _turn_agrees(label, g):
                agreed += 1
            else:
                disagreements.append(f"{item['fixture_id']}#{turn_id}")
    return {
        "compared_turns": compared,
        "agreed_turns": agreed,
        "unlabelled_turns": unlabelled,
        "agreement": round(agreed / compared, 4) if compared else None,
        "kappa_should_retrieve": _kappa(pairs),
        "disagreements": disagreements,
    }


def record_receipt(ledger_file: Path, review: dict[str, Any], result: dict[str, Any], date: str,
                   reviewer: str) -> dict[str, Any]:
    ledger = read_ledger(ledger_file)
    if ledger is None:
        raise FileNotFoundError(f"no ledger at {ledger_file}; run brainbench corpus generate first")
    sample = dict(review.get("sample", {}))
    sample["reviewer"] = reviewer
    sample["compared_turns"] = result["compared_turns"]
    ledger["gold_validation"] = {
        "method": VALIDATION_METHOD,
        "status": "done",
        "sample": sample,
        "agreement": result["agreement"],
        "kappa_should_retrieve": result["kappa_should_retrieve"],
        "disagreements": result["disagreements"],
        "date": date,
        # Ties the receipt to the gold it was computed on; regeneration drops it otherwise.
        "gold_hash": ledger.get("reviewed_gold_hash", ledger.get("generated_gold_hash")),
    }
    write_ledger(ledger_file, ledger)
    return ledger["gold_validation"]
