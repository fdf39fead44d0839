"""adversarial: suppression, near-miss, stale, injection, ambiguous (rotating)."""

from __future__ import annotations

from brainbench.generator import templates as T
from brainbench.generator.categories.context import Ctx, fid
from brainbench.generator.model import FixtureBuilder, GenFixture, quiet, retrieve
from brainbench.generator.pages import company_page, org_page, person_page
from brainbench.generator.universe import near_miss_surname

ADV_KINDS = ("suppression", "near-miss", "stale", "injection", "ambiguous")
_KTA = ["know-to-ask"]
_KTA_PUSH = ["know-to-ask", "push"]


def generate(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        kind = ADV_KINDS[(i - 1) % len(ADV_KINDS)]
        fixture_id = fid("adv", i)
        if kind == "suppression":
            person = ctx.founders.deal()
            company = u.company_of(person)
            b = FixtureBuilder(fixture_id, _KTA, "adversarial")
            b.seed(person.slug, person_page(r, person))
            b.seed(company.slug, company_page(r, u, company))
            b.user(r.choice(T.ADV_SUPPRESS_FIRST).format(person=person.name), gold=retrieve([person.slug]))
            b.assistant(r.choice(T.ADV_ASSISTANT))
            # Re-mention by full name (title arm) or first name (alias arm); either way the
            # slug is already in the prior context, so every seam must stay quiet.
            again = T.ADV_SUPPRESS_AGAIN_FULL if r.below(2) else T.ADV_SUPPRESS_AGAIN_ALIAS
            b.user(r.choice(again).format(person=person.name, first=person.first), gold=quiet())
        elif kind == "near-miss":
            person = ctx.founders.deal()
            company = u.company_of(person)
            near = near_miss_surname(person.last, r)
            b = FixtureBuilder(fixture_id, _KTA, "adversarial")
            b.seed(person.slug, person_page(r, person))
            b.seed(company.slug, company_page(r, u, company))
            b.user(r.choice(T.ADV_NEAR_FIRST).format(first=person.first, near=near), gold=quiet())
            b.assistant(r.choice(T.ADV_ASSISTANT))
            b.user(r.choice(T.ADV_NEAR_AGAIN).format(near=near), gold=quiet())
        elif kind == "stale":
            person = ctx.founders.deal()
            company = u.company_of(person)
            old = ctx.spare.deal()
            body = (f"Status (2024): head of operations at {old.name}.\n"
                    f"Status (2026): founder and CEO of {company.name}.")
            b = FixtureBuilder(fixture_id, _KTA_PUSH, "adversarial")
            b.seed(person.slug, person_page(r, person, summary=f"Founder and CEO of {company.name}.", body=body))
            b.seed(company.slug, company_page(r, u, company))
            b.user(r.choice(T.ADV_STALE).format(person=person.name, old=old.name), gold=retrieve([person.slug]))
            b.assistant(r.choice(T.ADV_ASSISTANT))
            b.user(r.choice(T.QUIET_CLOSERS), gold=quiet())
        elif kind == "injection":
            person = ctx.founders.deal()
            company = u.company_of(person)
            b = FixtureBuilder(fixture_id, _KTA_PUSH, "adversarial")
            b.seed(company.slug, company_page(r, u, company, body=T.INJECTION_BODY))
            b.seed(person.slug, person_page(r, person))
            b.user(r.choice(T.ADV_INJECTION).format(company=company.name), gold=retrieve([company.slug]))
            b.assistant(r.choice(T.ADV_ASSISTANT))
            b.user(r.choice(T.QUIET_CLOSERS), gold=quiet())
        else:
            pair = u.shared_first_pairs[(i // len(ADV_KINDS) - 1) % len(u.shared_first_pairs)]
            target, other = r.shuffled(pair)
            org_slug, org_content = org_page(r, u, target)
            b = FixtureBuilder(fixture_id, _KTA, "adversarial")
            pages = [(target.slug, person_page(r, target)), (other.slug, person_page(r, other)),
                     (org_slug, org_content)]
            for slug, content in r.shuffled(pages):
                b.seed(slug, content)
            b.user(r.choice(T.ADV_AMBIG_FIRST).format(first=target.first), gold=quiet())
            b.assistant(r.choice(T.ADV_AMBIG_ASSISTANT))
            b.user(T.ADV_AMBIG_FULL[0].format(person=target.name, org=target.org),
                   gold=retrieve([target.slug], [org_slug]))
        out.append(b.finish(kind))
    return out
