"""Who and where the memory-trust fixtures talk about: people with their company, and two city lists.

Two universes feed the same rules (trust spec §6.3):

* ``ours``: the founders of our own fictional universe (generator/universe.py, drawn from the
  corpus seed) and our invented places; what our corpus and ``run --fresh-corpus`` use.
* ``gbrain``: the universe gbrain's generator draws from seed 42, as the spec lists it, with its
  real city names; only for reproducing gbrain 0.60's 42 trust fixtures byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

from brainbench.generator.universe import PLACES, Universe, slugify


@dataclass(frozen=True)
class TrustPerson:
    first: str
    last: str
    company: str

    @property
    def full(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def slug(self) -> str:
        return f"people/{slugify(self.full)}"

    @property
    def alias(self) -> str:
        return self.first.lower()


@dataclass(frozen=True)
class TrustUniverse:
    people: tuple[TrustPerson, ...]
    # The trust category picks one city per fixture from six; state-resolution shuffles eight.
    trust_cities: tuple[str, ...]
    state_cities: tuple[str, ...]

    def __post_init__(self) -> None:
        # Person indexes step by 7, 11, 13, 17, 19 and pair p with p + 6: a list of 1, 2, 3 or 6
        # people would pair a person with themselves.
        if len(self.people) < 7 or len(self.trust_cities) != 6 or len(self.state_cities) != 8:
            raise ValueError("a trust universe needs at least 7 people, 6 trust cities and 8 state cities")


def ours(universe: Universe) -> TrustUniverse:
    """Our universe's founders (their org is their company), with our invented places as cities."""
    people = tuple(TrustPerson(p.first, p.last, p.org) for p in universe.founders)
    return TrustUniverse(people=people, trust_cities=PLACES[:6], state_cities=PLACES)


# gbrain's generator state when its trust categories start: Mulberry32 seeded with 42, after the
# 563 draws of its older categories (= 42 + 563 * 0x6D2B79F5 mod 2**32).
GBRAIN_TRUST_STATE = 379401721

_GBRAIN_COMPANIES = (
    "Glintworks Co", "Fernwheel", "Copperline", "Driftspark Works", "Lumenforge Systems", "Bramblevolt Co",
    "Tidecraft Systems", "Pebblerock Co", "Skylarkift", "Mosslight", "Quartzbloom Systems", "Windrose",
    "Cloudmeadow Works", "Emberweave Systems", "Frostpetal Systems", "Gravelnest Co", "Honeyspire Works",
    "Inkwhale Co", "Junipergrid Labs", "Kelpforge", "Lichenloop", "Marblepond Labs", "Nettleray Co",
    "Orchardbyte Labs", "Plumecastle Systems", "Quillstream Labs", "Russetvane Systems", "Saplingrove Works",
    "Thistledew Co", "Umbergale Labs",
)
_GBRAIN_PEOPLE = (
    ("Alarico Marrowfield", 4), ("Mateo Glimmerton", 19), ("Halcyon Quillfeather", 10), ("Vada Tavenner", 6),
    ("Anouk Mirelez", 18), ("Freya Emberlyn", 26), ("Tobias Cindergate", 9), ("Yuki Quincewood", 23),
    ("Marisol Novalis", 11), ("Saoirse Oakhurst", 3), ("Elspeth Farrowdale", 25), ("Noor Wrenhaven", 11),
    ("Emrys Galewright", 0), ("Orlando Lanternby", 22), ("Soren Hartwhistle", 19), ("Zelda Bransome", 26),
    ("Ronan Pellwarden", 27), ("Calliope Saltmarsh", 6), ("Leander Crestfallow", 18), ("Oskar Pemberlake", 14),
    ("Petra Moonstead", 5), ("Verity Thornquist", 1), ("Anneke Veldenmere", 21), ("Beatrix Larkmoor", 21),
    ("Cosmo Hollybrook", 8), ("Bastian Rookswood", 8), ("Ingrid Stargazer", 10), ("Rafael Maplevale", 0),
    ("Wren Fenwhistle", 6), ("Caspian Ironwood", 29), ("Mireille Coppersmith", 17), ("Stellan Frostholm", 29),
    ("Jorin Silverthorne", 4), ("Devran Tidewell", 5), ("Hamish Ashgrove", 16), ("Kenji Briarcliffe", 8),
    ("Dmitri Brackenbury", 11), ("Imogen Corvalen", 13), ("Tamsin Windermoor", 12), ("Priya Duskfield", 20),
)


def gbrain() -> TrustUniverse:
    """gbrain 0.60's seed-42 universe (trust spec §6.3)."""
    people = []
    for full, company in _GBRAIN_PEOPLE:
        first, last = full.split(" ")
        people.append(TrustPerson(first, last, _GBRAIN_COMPANIES[company]))
    return TrustUniverse(people=tuple(people),
                         trust_cities=("Lisbon", "Oslo", "Austin", "Kyoto", "Tallinn", "Porto"),
                         state_cities=("Lisbon", "Porto", "Oslo", "Bergen", "Austin", "Denver", "Kyoto", "Osaka"))
