"""In-memory shape of a generated fixture and the builder that keeps text and gold together.

Gold is attached in the same call that appends a turn (``user(text, gold=...)``), so a
template change cannot leave gold pointing at a turn that no longer says the thing.
Dicts are built in the published key order; ``write.py`` serializes them as-is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JsonDict = dict[str, Any]


@dataclass(frozen=True)
class GenFixture:
    fixture_id: str
    category: str
    kind: str  # variant within the category, e.g. "v3-lowercase-alias", "suppression"
    unit: str  # holdout unit: the fixture id, or the pair id for continuity pairs
    fixture: JsonDict
    gold: JsonDict


def quiet() -> JsonDict:
    return {"should_retrieve": False}


def retrieve(gold_slugs: list[str], acceptable: list[str] | None = None) -> JsonDict:
    if not gold_slugs:
        raise ValueError("a retrieve turn needs gold slugs")
    out: JsonDict = {"should_retrieve": True, "gold_slugs": list(gold_slugs)}
    out["acceptable_slugs"] = [s for s in (acceptable or []) if s not in gold_slugs]
    return out


def gold_fact(gist: str, fact: str, entity_slug: str | None, keywords: list[str], kind: str) -> JsonDict:
    for kw in keywords:
        # The deterministic extractor echoes `fact`; a keyword not inside it can never match.
        if kw.lower() not in fact.lower():
            raise ValueError(f"keyword {kw!r} not in fact {fact!r}")
    return {"gist": gist, "fact": fact, "entity_slug": entity_slug,
            "match_keywords": list(keywords), "kind": kind}


@dataclass
class FixtureBuilder:
    fixture_id: str
    suites: list[str]
    category: str
    sources: list[str] | None = None
    active_source: str | None = None
    seed_pages: list[JsonDict] = field(default_factory=list)
    turns: list[JsonDict] = field(default_factory=list)
    gold_turns: JsonDict = field(default_factory=dict)
    continuity: JsonDict | None = None
    gold_continuity: JsonDict | None = None

    def seed(self, slug: str, content: str, source_id: str | None = None) -> None:
        page: JsonDict = {"slug": slug}
        if source_id is not None:
            page["source_id"] = source_id
        page["content"] = content
        self.seed_pages.append(page)

    def _turn(self, role: str, text: str, ts: str | None) -> int:
        turn_id = len(self.turns) + 1
        turn: JsonDict = {"turn_id": turn_id, "role": role}
        if ts is not None:
            turn["ts"] = ts
        turn["text"] = text
        self.turns.append(turn)
        return turn_id

    def user(self, text: str, *, gold: JsonDict | None = None, ts: str | None = None) -> int:
        turn_id = self._turn("user", text, ts)
        if gold is not None:
            self.gold_turns[str(turn_id)] = gold
        return turn_id

    def assistant(self, text: str, *, ts: str | None = None) -> int:
        # Assistant turns never carry retrieval gold (spec §1.4).
        return self._turn("assistant", text, ts)

    def pair(self, pair_id: str, role: str) -> None:
        self.continuity = {"pair_id": pair_id, "pair_role": role}

    def build(self) -> tuple[JsonDict, JsonDict]:
        fx: JsonDict = {
            "schema_version": 1,
            "fixture_id": self.fixture_id,
            "suites": list(self.suites),
            "category": self.category,
        }
        if self.sources is not None:
            fx["sources"] = list(self.sources)
        if self.active_source is not None:
            fx["active_source"] = self.active_source
        if self.seed_pages:
            fx["seed_pages"] = self.seed_pages
        fx["turns"] = self.turns
        if self.continuity is not None:
            fx["continuity"] = self.continuity
        gold: JsonDict = {"fixture_id": self.fixture_id, "turns": self.gold_turns}
        if self.gold_continuity is not None:
            gold["continuity"] = self.gold_continuity
        return fx, gold

    def finish(self, kind: str, unit: str | None = None) -> GenFixture:
        fx, gold = self.build()
        return GenFixture(self.fixture_id, self.category, kind, unit or self.fixture_id, fx, gold)
