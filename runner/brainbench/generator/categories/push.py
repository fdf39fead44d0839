"""push: one turn names four seeded entities, more than any seam's pointer budget."""

from __future__ import annotations

from brainbench.generator import templates as T
from brainbench.generator.categories.context import Ctx, fid
from brainbench.generator.model import FixtureBuilder, GenFixture, quiet, retrieve
from brainbench.generator.pages import company_page, fund_page, person_page


def generate(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        founder = ctx.founders.deal()
        company = u.company_of(founder)
        # The second person is a fund partner; never one sharing the founder's first name,
        # which would make the alias ambiguous on claude-code's window re-extraction.
        partner = ctx.partners.deal(avoid=[p for p in u.partners if p.first == founder.first])
        fund = ctx.funds.deal()
        b = FixtureBuilder(fid("push", i), ["know-to-ask", "push"], "push")
        pages = [(founder.slug, person_page(r, founder)), (partner.slug, person_page(r, partner)),
                 (fund.slug, fund_page(r, fund)), (company.slug, company_page(r, u, company))]
        for slug, content in r.shuffled(pages):
            b.seed(slug, content)
        names = r.shuffled([founder.name, partner.name, fund.name, company.name])
        text = r.choice(T.PUSH_PROBES).format(a=names[0], b=names[1], c=names[2], d=names[3])
        # Gold = the two people and the fund; the company is acceptable (spec §12.4).
        b.user(text, gold=retrieve([founder.slug, partner.slug, fund.slug], [company.slug]))
        b.assistant(r.choice(T.PUSH_ASSISTANT))
        b.user(r.choice(T.PUSH_FOLLOWUPS), gold=quiet())
        out.append(b.finish("four-entities"))
    return out
