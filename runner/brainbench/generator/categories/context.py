"""Shared generation context: the PRNG, the universe and entity decks."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from brainbench.generator.prng import Deck, Prng
from brainbench.generator.universe import Universe

# All timestamps fall inside 2025-01-06 .. 2026-06 (privacy lint: years 2024–2026 only).
_EPOCH = datetime(2025, 1, 6, tzinfo=UTC)
_SPAN_DAYS = 500


def iso(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Ctx:
    prng: Prng
    universe: Universe
    founders: Deck = field(init=False)
    partners: Deck = field(init=False)
    funds: Deck = field(init=False)
    spare: Deck = field(init=False)

    def __post_init__(self) -> None:
        self.founders = Deck(self.prng, self.universe.founders)
        self.partners = Deck(self.prng, self.universe.partners)
        self.funds = Deck(self.prng, self.universe.funds)
        self.spare = Deck(self.prng, self.universe.spare_companies)

    def start_time(self) -> datetime:
        """A working-hours start instant (UTC) somewhere in the corpus window."""
        day = self.prng.below(_SPAN_DAYS)
        hour = self.prng.between(9, 16)
        minute = self.prng.choice((0, 5, 10, 15, 20, 30, 40, 45))
        return _EPOCH + timedelta(days=day, hours=hour, minutes=minute)


def fid(prefix: str, n: int) -> str:
    return f"gen-{prefix}-{n:03d}"
