"""kta-pos (five resolver-arm variants) and kta-neg (capitalized non-entities)."""

from __future__ import annotations

from brainbench.generator import templates as T
from brainbench.generator.categories.context import Ctx, fid
from brainbench.generator.model import FixtureBuilder, GenFixture, quiet, retrieve
from brainbench.generator.pages import company_page, person_page

KTA_VARIANTS = ("v0-full-name", "v1-company", "v2-first-name", "v3-lowercase-alias", "v4-surname")


def generate_pos(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        variant = (i - 1) % len(KTA_VARIANTS)
        person = ctx.founders.deal()
        company = u.company_of(person)
        # A second founder as a distractor: a different first name (alias) and surname,
        # so the surname arm (v4) has a real competitor that must not match.
        distractor = ctx.founders.deal(avoid=[p for p in u.founders if p.first == person.first] + [person])
        b = FixtureBuilder(fid("kta-pos", i), ["know-to-ask", "push"], "kta-pos")
        pages = [(person.slug, person_page(r, person)), (company.slug, company_page(r, u, company)),
                 (distractor.slug, person_page(r, distractor))]
        for slug, content in r.shuffled(pages):
            b.seed(slug, content)
        fields = {"person": person.name, "company": company.name, "first": person.first,
                  "first_lc": person.alias, "last": person.last}
        templates = (T.KTA_V0, T.KTA_V1, T.KTA_V2, T.KTA_V3, T.KTA_V4)[variant]
        # The first round uses each variant's canonical template (e.g. "remind me what …",
        # "Did X ever follow up …") so every corpus contains them; later rounds draw.
        text = templates[0] if i <= len(KTA_VARIANTS) else r.choice(templates)
        if variant == 0:
            gold = retrieve([person.slug, company.slug])
        elif variant == 1:
            gold = retrieve([company.slug])
        else:
            gold = retrieve([person.slug], [company.slug])
        b.user(text.format(**fields), gold=gold)
        b.assistant(r.choice(T.KTA_ASSISTANT))
        b.user(r.choice(T.QUIET_CLOSERS), gold=quiet())
        out.append(b.finish(KTA_VARIANTS[variant]))
    return out


def generate_neg(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        person = ctx.founders.deal()
        company = u.company_of(person)
        b = FixtureBuilder(fid("kta-neg", i), ["know-to-ask"], "kta-neg")
        b.seed(person.slug, person_page(r, person))
        b.seed(company.slug, company_page(r, u, company))
        first, last = u.unknown_people[(i - 1) % len(u.unknown_people)]
        fields = {"place": r.choice(u.places), "weekday": r.choice(T.WEEKDAYS),
                  "unknown": f"{first} {last}"}
        b.user(r.choice(T.NEG_SMALLTALK).format(**fields), gold=quiet())
        b.assistant(r.choice(T.NEG_ASSISTANT))
        b.user(r.choice(T.NEG_UNKNOWN).format(**fields), gold=quiet())
        out.append(b.finish("smalltalk+unknown-name"))
    return out
