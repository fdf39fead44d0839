"""Stratified review sample: fixture text and brain contents, never gold.

The reviewer fills ``labels`` for every user turn and hands the file back to
``brainbench corpus check-labels``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from brainbench.generator.prng import Prng
from brainbench.generator.write import FIXTURE_SUFFIX

INSTRUCTIONS = (
    "For every user turn, decide whether an agent with this brain should look something up "
    "(should_retrieve) and, if so, which page slugs it should surface (slugs). Judge each turn on "
    "its own: a page already surfaced earlier in the same conversation should not be surfaced again. "
    "Only pages in the active source count; pages of other sources must never surface."
)

_TITLE = re.compile(r"^title: (.*)$", re.MULTILINE)
_ALIASES = re.compile(r"^aliases: \[(.*)\]$", re.MULTILINE)


def load_fixtures(fixtures_dir: Path) -> list[dict[str, Any]]:
    out = []
    for p in sorted(fixtures_dir.iterdir()):
        if p.is_file() and p.name.endswith(FIXTURE_SUFFIX):
            out.append(json.loads(p.read_text(encoding="utf-8")))
    return out


def _brain(fx: dict[str, Any]) -> list[dict[str, Any]]:
    pages = []
    for page in fx.get("seed_pages", []):
        title = _TITLE.search(page["content"])
        aliases = _ALIASES.search(page["content"])
        pages.append({
            "slug": page["slug"],
            "source_id": page.get("source_id", "default"),
            "title": title.group(1).strip() if title else None,
            "aliases": [a.strip() for a in aliases.group(1).split(",")] if aliases else [],
        })
    return pages


def build_sample(fixtures_dir: Path, fraction: float, seed: int) -> dict[str, Any]:
    if not 0 < fraction <= 1:
        raise ValueError("fraction must be in (0, 1]")
    fixtures = load_fixtures(fixtures_dir)
    by_id = {fx["fixture_id"]: fx for fx in fixtures}
    strata: dict[str, list[str]] = {}
    for fx in fixtures:
        strata.setdefault(str(fx.get("category", "uncategorized")), []).append(fx["fixture_id"])
    prng = Prng(seed)
    chosen: list[str] = []
    for category in sorted(strata):
        ids = sorted(strata[category])
        k = max(1, math.ceil(fraction * len(ids)))
        chosen += prng.sample(ids, k)
    items = []
    for fixture_id in sorted(chosen):
        fx = by_id[fixture_id]
        brain = _brain(fx)
        earlier: list[dict[str, Any]] = []
        cont = fx.get("continuity")
        if cont and cont.get("pair_role") == "reader":
            # A reader's brain is its writer's brain after write-back; show the writer's
            # seeds and conversation so the reviewer judges what the reader could recall.
            for other in fixtures:
                oc = other.get("continuity")
                if oc and oc.get("pair_id") == cont.get("pair_id") and oc.get("pair_role") == "writer":
                    brain = _brain(other) + brain
                    earlier = [{"role": t["role"], "text": t["text"]} for t in other["turns"]]
        items.append({
            "fixture_id": fixture_id,
            "category": fx.get("category"),
            "active_source": fx.get("active_source", "default"),
            "brain": brain,
            "earlier_conversation": earlier,
            "turns": [{"turn_id": t["turn_id"], "role": t["role"], "text": t["text"]} for t in fx["turns"]],
            "labels": {str(t["turn_id"]): {"should_retrieve": None, "slugs": []}
                       for t in fx["turns"] if t["role"] == "user"},
        })
    return {
        "sample": {"fraction": fraction, "seed": seed, "fixtures": len(items),
                   "user_turns": sum(len(i["labels"]) for i in items)},
        "instructions": INSTRUCTIONS,
        "items": items,
    }
