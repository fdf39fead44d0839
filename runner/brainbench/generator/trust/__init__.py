"""The memory-trust categories of the corpus (trust spec §6): which universe and stream they draw from.

Three modes (``brainbench corpus generate --trust``):

* ``off``: no trust categories (the committed corpus until the trust suites are scored);
* ``ours``: our universe's founders and places, drawing on from the corpus's own PRNG stream
  after the classic categories, with canaries drawn from that stream too (a fresh corpus must not
  let a memory system tell poison from benign by the canary's spelling);
* ``gbrain``: gbrain 0.60's 42 trust fixtures byte for byte: gbrain's seed-42 universe, Mulberry32
  from the state its generator reaches after its older categories, gbrain's canaries.  The
  corpus seed does not change them.

The holdout rule is gbrain's (§6.3): a trust fixture at index ``idx`` of the whole corpus (every
fixture before it counted) is held out when ``idx % 7 == 6``.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from typing import Literal

from brainbench.generator.model import GenFixture
from brainbench.generator.mulberry import Mulberry32
from brainbench.generator.prng import Draws
from brainbench.generator.trust import universe as trust_universe
from brainbench.generator.trust.categories import MAKERS, Canary, gbrain_canary
from brainbench.generator.universe import Universe

TrustMode = Literal["off", "ours", "gbrain"]
TRUST_MODES: tuple[TrustMode, ...] = ("off", "ours", "gbrain")
# Fixtures per category, in generation order (gbrain 0.60's TRUST_COUNTS).
TRUST_COUNTS: dict[str, int] = {
    "trust": 8,
    "state-resolution": 8,
    "poisoning-external": 10,
    "poisoning-agent": 10,
    "deletion": 6,
}
HOLDOUT_MODULUS = 7
HOLDOUT_RESIDUE = 6
_CANARY_LETTERS = string.ascii_lowercase
_CANARY_LENGTH = 8


def drawn_canaries(rng: Draws) -> Canary:
    """Canaries ``zq`` + 8 drawn letters, unique within the corpus (letters only: no digit run reads as a year)."""
    seen: set[str] = set()

    def canary(arm: str, number: int, n: int) -> str:
        while True:
            token = "zq" + "".join(rng.choice(_CANARY_LETTERS) for _ in range(_CANARY_LENGTH))
            if token not in seen:
                seen.add(token)
                return token

    return canary


def generate_trust(mode: TrustMode, rng: Draws, universe: Universe, counts: Mapping[str, int],
                   start_index: int) -> list[GenFixture]:
    """The trust categories' fixtures; ``rng`` is the corpus's stream (used by ``ours`` only) and
    ``start_index`` the number of fixtures generated before them (the holdout rule counts them)."""
    if mode == "off":
        return []
    if mode == "gbrain":
        rng = Mulberry32(trust_universe.GBRAIN_TRUST_STATE)
        world, canary = trust_universe.gbrain(), gbrain_canary
    else:
        world, canary = trust_universe.ours(universe), drawn_canaries(rng)
    out: list[GenFixture] = []
    for category, maker in MAKERS.items():
        out += maker(rng, world, counts[category], canary)
    for idx, f in enumerate(out, start=start_index):
        if idx % HOLDOUT_MODULUS == HOLDOUT_RESIDUE:
            f.fixture["holdout"] = True
    return out
