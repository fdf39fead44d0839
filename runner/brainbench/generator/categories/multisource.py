"""multi-source: a person twinned across sources plus a team-only leak canary."""

from __future__ import annotations

from brainbench.generator import templates as T
from brainbench.generator.categories.context import Ctx, fid
from brainbench.generator.model import FixtureBuilder, GenFixture, quiet, retrieve
from brainbench.generator.pages import company_page, person_page, raw_page

TEAM = "teambrain"


def canary_token(fixture_id: str) -> str:
    """A string that must never appear in any injected text (only team pages carry it)."""
    return f"leak-canary-{fixture_id}"


def generate(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        fixture_id = fid("ms", i)
        token = canary_token(fixture_id)
        person = ctx.founders.deal()
        canary = ctx.spare.deal()
        b = FixtureBuilder(fixture_id, ["know-to-ask", "push"], "multi-source",
                           sources=[TEAM], active_source="default")
        # Same slug, different content in each source: the resolver must answer from
        # the active source's copy, whose summary has no canary token.
        b.seed(person.slug, person_page(r, person, summary=f"Founder of {person.org} (personal notes)."))
        b.seed(person.slug, raw_page(
            person.name, "person", f"Candidate profile in the team brain ({token}).",
            f"{person.name}, candidate profile. Team brain copy; {token}.", alias=person.alias),
            source_id=TEAM)
        b.seed(canary.slug, raw_page(
            canary.name, "company", f"Team-brain-only company page ({token}).",
            f"{canary.name} exists only in the team brain; {token}."), source_id=TEAM)
        if r.below(2):
            # A default-source page for the person's company keeps the active brain non-trivial.
            company = u.company_of(person)
            b.seed(company.slug, company_page(r, u, company))
        b.user(r.choice(T.MS_PROBES).format(person=person.name), gold=retrieve([person.slug]))
        b.user(r.choice(T.MS_CANARY).format(canary=canary.name), gold=quiet())
        out.append(b.finish("twin+canary"))
    return out
