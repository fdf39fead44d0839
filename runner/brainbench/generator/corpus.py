"""Top-level generation: universe -> categories in fixed order -> holdout marking -> trust categories."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from brainbench.generator.categories import adversarial, continuity, kta, multisource, push, writeback
from brainbench.generator.categories.context import Ctx
from brainbench.generator.model import GenFixture
from brainbench.generator.prng import Prng
from brainbench.generator.trust import TRUST_COUNTS, TRUST_MODES, TrustMode, generate_trust
from brainbench.generator.universe import Universe, build_universe

GENERATOR_NAME = "brainbench-generator"
GENERATOR_VERSION = "1"
DEFAULT_SEED = 42

# Category -> number of generation units (continuity counts pairs); spec §12.4 counts.
DEFAULT_COUNTS: dict[str, int] = {
    "kta-pos": 25,
    "kta-neg": 15,
    "push": 20,
    "write-back": 20,
    "continuity": 15,
    "multi-source": 10,
    "adversarial": 15,
}
CATEGORY_ORDER = tuple(DEFAULT_COUNTS)

# Holdout rule: within each category, unit number k (1-based) is held out when
# k % 7 == 3. Stratified by category, independent of the seed, ~1 in 7 units (≈14–15%);
# a continuity pair is one unit, so both members always move together.
HOLDOUT_MODULUS = 7
HOLDOUT_RESIDUE = 3


@dataclass(frozen=True)
class Corpus:
    seed: int
    universe: Universe
    fixtures: tuple[GenFixture, ...]
    trust: TrustMode = "ours"

    def by_id(self) -> dict[str, GenFixture]:
        return {f.fixture_id: f for f in self.fixtures}


def _is_holdout_unit(k: int) -> bool:
    return k % HOLDOUT_MODULUS == HOLDOUT_RESIDUE


def generate_corpus(seed: int = DEFAULT_SEED, counts: Mapping[str, int] | None = None,
                    trust: TrustMode = "ours") -> Corpus:
    """Build the whole corpus in memory. Pure function of (seed, counts, trust).

    ``trust`` adds the memory-trust categories after the classic ones (``brainbench.generator.trust``);
    ``counts`` may name those categories too.
    """
    if trust not in TRUST_MODES:
        raise ValueError(f"unknown trust mode {trust!r}: choose from {', '.join(TRUST_MODES)}")
    wanted = {**DEFAULT_COUNTS, **TRUST_COUNTS}
    if counts is not None:
        unknown = set(counts) - set(wanted)
        if unknown:
            raise ValueError(f"unknown categories: {sorted(unknown)}")
        wanted.update(counts)
    prng = Prng(seed)
    universe = build_universe(prng)
    ctx = Ctx(prng, universe)
    makers = {
        "kta-pos": kta.generate_pos,
        "kta-neg": kta.generate_neg,
        "push": push.generate,
        "write-back": writeback.generate,
        "continuity": continuity.generate,
        "multi-source": multisource.generate,
        "adversarial": adversarial.generate,
    }
    fixtures: list[GenFixture] = []
    for category in CATEGORY_ORDER:
        made = makers[category](ctx, wanted[category])
        units: list[str] = []
        for f in made:
            if f.unit not in units:
                units.append(f.unit)
        held = {u for k, u in enumerate(units, start=1) if _is_holdout_unit(k)}
        for f in made:
            if f.unit in held:
                # `holdout` is written as the last key (gbrain's order, spec §12.1).
                f.fixture["holdout"] = True
            fixtures.append(f)
    fixtures += generate_trust(trust, prng, universe, wanted, start_index=len(fixtures))
    return Corpus(seed=seed, universe=universe, fixtures=tuple(fixtures), trust=trust)
