"""The fictional universe: invented people, companies, funds and places.

Every proper name the generator can ever emit comes from the pools below (plus the
near-miss variants derived from them), which is what the privacy lint checks against.
The pools are larger than the universe so a different seed picks different names.

Constraints the traps rely on (checked in ``_check_pools``):
* first names, surnames, unknown-person names, company/fund stems and places are
  pairwise disjoint, so a surname-only mention can only hit a person's surname and a
  lowercase first name can only hit that person's alias;
* no pool name is an English word the templates use in lowercase (weak-alias arm) or a
  stopword/common word of the extractor;
* near-miss variants (surname + short suffix) collide with nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainbench.generator.prng import Prng

FIRST_NAMES: tuple[str, ...] = (
    "Alessia", "Bramwell", "Caspian", "Delphine", "Eulalia", "Fenwick", "Gideon", "Henrike",
    "Isolde", "Jovanna", "Kasimir", "Leontine", "Mireille", "Nikolai", "Oriane", "Percival",
    "Quillan", "Rosalind", "Severin", "Thessaly", "Ulrike", "Valentin", "Wilhelmina", "Xanthe",
    "Yannick", "Zephyrine", "Anselm", "Berenice", "Cordelia", "Dorian", "Evander", "Florentin",
    "Galatea", "Hartwell", "Ignatia", "Jessamy", "Konstanze", "Lysander", "Marguerite", "Neriah",
    "Octavian", "Philippa", "Quintus", "Romilly", "Sabine", "Tiberius", "Ottoline", "Vespera",
)

SURNAMES: tuple[str, ...] = (
    "Thornwhistle", "Vellacourt", "Gallowmere", "Brindlecombe", "Ashenholt", "Dunmarrow",
    "Fernhallow", "Greywarden", "Hollowbeck", "Ironsby", "Larkspire", "Mossgrave", "Nettlefold",
    "Pellingrove", "Quarrington", "Rookwhistle", "Saltmere", "Tidewell", "Umberfield", "Vantreese",
    "Wrenmoor", "Yarrowby", "Zellerhoff", "Ambervane", "Brackwater", "Cindervale", "Dovecrest",
    "Elmsworth", "Foxhollow", "Glimmerton", "Harrowdine", "Inglemoor", "Juniperley", "Kestrelby",
    "Lanternhurst", "Merrivane", "Northhollow", "Ottersley", "Pemberdown", "Quillsworth",
    "Ravensholt", "Stormbridge", "Thistlecombe", "Underhay", "Vexley", "Wintermere", "Yelverstone",
    "Ashcombeley",
)

# People who are never seeded: the kta-neg "unknown full name" probes.
UNKNOWN_FIRST_NAMES: tuple[str, ...] = (
    "Anneliese", "Bertrand", "Clementine", "Desmond", "Estelle", "Fabian", "Gwendolyn",
    "Horatio", "Imogen", "Jasper", "Katriona", "Leopold",
)
UNKNOWN_SURNAMES: tuple[str, ...] = (
    "Brannigrove", "Cobblestead", "Drummelow", "Featherstane", "Gorsewick", "Hembleton",
    "Ivorsdale", "Jollimore", "Kinnerwick", "Loxbury", "Mallowcrest", "Nimbleforth",
)

COMPANY_STEMS: tuple[str, ...] = (
    "Quorvane", "Lumivex", "Tessellight", "Brightmoss", "Corvantis", "Halcyra", "Nimbrel",
    "Ostravel", "Pellucine", "Ravelith", "Solvantra", "Trellisoft", "Umbrafin", "Veridune",
    "Zentriq", "Aurelune", "Bexaflow", "Cartolia", "Dynamire", "Embervault", "Fathomly",
    "Glintwork", "Hexapine", "Inkwavel", "Jubalix", "Kelvora", "Loomstack", "Mintaro",
    "Novarette", "Orbiquant", "Plinthwise", "Quillary", "Runeforge", "Stellarch", "Tundrix",
    "Vantablu", "Wispline", "Xylocore", "Yondara", "Zephyrix",
)
# Second words of two-word company names; ordinary nouns, never used alone in a turn.
COMPANY_SUFFIXES: tuple[str, ...] = ("Labs", "Systems", "Analytics", "Robotics", "Health", "Works")

FUND_STEMS: tuple[str, ...] = (
    "Cobaltine", "Driftmark", "Emberline", "Fernreach", "Gildwater", "Hearthwick", "Ironvale",
    "Jundale", "Kelpford", "Lodemark", "Mistrelle", "Nightfern", "Oxbowen", "Pinewold",
    "Quarrowen", "Rivenholt",
)
FUND_SUFFIXES: tuple[str, ...] = ("Capital", "Ventures", "Partners", "Fund")

PLACES: tuple[str, ...] = (
    "Marrowick", "Saltbridge", "Kelderby", "Ashmouth", "Vellamouth", "Oxenhurst", "Thornquay",
    "Dunmeadow",
)

# Appended to a seeded surname to build a near-miss name that must NOT resolve.
NEAR_MISS_SUFFIXES: tuple[str, ...] = ("son", "ley", "ton", "er")

N_FOUNDERS = 30
N_PARTNERS = 10
N_FUNDS = 12
# Pairs of people that share a first name (and therefore the lowercase alias);
# only the adversarial "ambiguous" fixtures seed both members of a pair.
N_SHARED_FIRST_NAMES = 3


def slugify(text: str) -> str:
    """Slug rule of spec §3.3 restricted to ASCII (every pool name is ASCII)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


@dataclass(frozen=True)
class Company:
    name: str
    sector: str

    @property
    def slug(self) -> str:
        return f"companies/{slugify(self.name)}"


@dataclass(frozen=True)
class Fund:
    name: str
    focus: str

    @property
    def slug(self) -> str:
        return f"funds/{slugify(self.name)}"


@dataclass(frozen=True)
class Person:
    first: str
    last: str
    role: str  # "founder" or "partner"
    org: str  # company name (founder) or fund name (partner)
    org_slug: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def slug(self) -> str:
        return f"people/{slugify(self.name)}"

    @property
    def alias(self) -> str:
        return self.first.lower()


@dataclass(frozen=True)
class Universe:
    founders: tuple[Person, ...]
    partners: tuple[Person, ...]
    companies: tuple[Company, ...]
    spare_companies: tuple[Company, ...]  # never seeded: stale "former employer", canaries
    funds: tuple[Fund, ...]
    shared_first_pairs: tuple[tuple[Person, Person], ...]
    places: tuple[str, ...]
    unknown_people: tuple[tuple[str, str], ...]

    @property
    def people(self) -> tuple[Person, ...]:
        return self.founders + self.partners

    def founder_of(self, company: Company) -> Person:
        for p in self.founders:
            if p.org_slug == company.slug:
                return p
        raise KeyError(company.slug)

    def company_of(self, person: Person) -> Company:
        for c in self.companies:
            if c.slug == person.org_slug:
                return c
        raise KeyError(person.org_slug)

    def fund_of(self, person: Person) -> Fund:
        for f in self.funds:
            if f.slug == person.org_slug:
                return f
        raise KeyError(person.org_slug)


SECTORS: tuple[str, ...] = (
    "warehouse robotics", "clinical scheduling software", "grid battery analytics",
    "developer tooling", "freight visibility", "payroll compliance", "soil sensing",
    "insurance claims automation", "retail demand forecasting", "lab automation",
    "carbon accounting", "field service scheduling",
)
FUND_FOCI: tuple[str, ...] = (
    "seed-stage infrastructure", "climate and energy", "vertical software",
    "early-stage health", "industrial automation", "developer platforms",
)


def near_miss_surname(surname: str, prng: Prng) -> str:
    return surname + prng.choice(NEAR_MISS_SUFFIXES)


def all_near_miss_names() -> frozenset[str]:
    return frozenset(s + suf for s in SURNAMES for suf in NEAR_MISS_SUFFIXES)


def pool_vocabulary() -> frozenset[str]:
    """Every capitalized name token the generator may emit (for the privacy lint)."""
    words: set[str] = set()
    for pool in (FIRST_NAMES, SURNAMES, UNKNOWN_FIRST_NAMES, UNKNOWN_SURNAMES, COMPANY_STEMS,
                 COMPANY_SUFFIXES, FUND_STEMS, FUND_SUFFIXES, PLACES):
        words.update(pool)
    return frozenset(words | all_near_miss_names())


def _check_pools() -> None:
    pools = {
        "first": FIRST_NAMES, "surname": SURNAMES, "unknown_first": UNKNOWN_FIRST_NAMES,
        "unknown_last": UNKNOWN_SURNAMES, "company": COMPANY_STEMS, "fund": FUND_STEMS,
        "place": PLACES,
    }
    seen: dict[str, str] = {}
    for label, pool in pools.items():
        if len(set(pool)) != len(pool):
            raise AssertionError(f"duplicate name in pool {label}")
        for name in pool:
            low = name.lower()
            if low in seen:
                raise AssertionError(f"{name} in both {seen[low]} and {label}")
            seen[low] = label
    for near in all_near_miss_names():
        if near.lower() in seen:
            raise AssertionError(f"near-miss {near} collides with pool {seen[near.lower()]}")


def build_universe(prng: Prng) -> Universe:
    """Draw the universe from the pools; all draws go through ``prng`` in fixed order."""
    _check_pools()
    n_people = N_FOUNDERS + N_PARTNERS
    distinct_firsts = prng.sample(FIRST_NAMES, n_people - N_SHARED_FIRST_NAMES)
    # The last few people reuse the first names of the first few: shared-alias pairs.
    firsts = distinct_firsts + distinct_firsts[:N_SHARED_FIRST_NAMES]
    lasts = prng.sample(SURNAMES, n_people)

    stems = prng.shuffled(COMPANY_STEMS)
    companies: list[Company] = []
    for stem in stems:
        # About a third of companies are one-word names: those exercise the
        # single-token title arm (and a surname arm that must find no person).
        name = stem if prng.below(3) == 0 else f"{stem} {prng.choice(COMPANY_SUFFIXES)}"
        companies.append(Company(name=name, sector=prng.choice(SECTORS)))
    seeded_companies = tuple(companies[:N_FOUNDERS])
    spare = tuple(companies[N_FOUNDERS:])

    fund_stems = prng.sample(FUND_STEMS, N_FUNDS)
    funds = tuple(Fund(name=f"{s} {prng.choice(FUND_SUFFIXES)}", focus=prng.choice(FUND_FOCI))
                  for s in fund_stems)

    # Order people so shared-first-name pairs are (founder, founder) or (founder, partner):
    # person i and person n_people - N_SHARED + i share a first name.
    founders: list[Person] = []
    partners: list[Person] = []
    for i in range(n_people):
        if i < N_FOUNDERS:
            c = seeded_companies[i]
            founders.append(Person(firsts[i], lasts[i], "founder", c.name, c.slug))
        else:
            f = funds[(i - N_FOUNDERS) % N_FUNDS]
            partners.append(Person(firsts[i], lasts[i], "partner", f.name, f.slug))
    people = founders + partners
    pairs = tuple((people[i], people[n_people - N_SHARED_FIRST_NAMES + i])
                  for i in range(N_SHARED_FIRST_NAMES))

    unknown_firsts = prng.shuffled(UNKNOWN_FIRST_NAMES)
    unknown_lasts = prng.shuffled(UNKNOWN_SURNAMES)
    unknown = tuple(zip(unknown_firsts, unknown_lasts, strict=True))

    return Universe(
        founders=tuple(founders),
        partners=tuple(partners),
        companies=seeded_companies,
        spare_companies=spare,
        funds=funds,
        shared_first_pairs=pairs,
        places=PLACES,
        unknown_people=unknown,
    )
