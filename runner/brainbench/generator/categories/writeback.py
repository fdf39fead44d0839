"""write-back: timestamped claims after a >30-minute gap, one gold fact per claim."""

from __future__ import annotations

from datetime import timedelta

from brainbench.generator import templates as T
from brainbench.generator.categories.context import Ctx, fid, iso
from brainbench.generator.model import FixtureBuilder, GenFixture, JsonDict, gold_fact, quiet
from brainbench.generator.pages import company_page, person_page
from brainbench.generator.universe import Person

KINDS = ("belief", "commitment", "fact", "preference")


def _claim(ctx: Ctx, kind: str, person: Person) -> tuple[str, JsonDict]:
    r = ctx.prng
    if kind == "belief":
        topic, kws = r.choice(T.WB_BELIEF)
        text = f"{person.first} is worried about {topic}; it is the main concern going into the next round."
        fact = gold_fact(f"concern: {kws[0]}", f"{person.name} is concerned about {topic}",
                         person.slug, kws, "belief")
    elif kind == "commitment":
        item, kws = r.choice(T.WB_COMMITMENT)
        day = r.choice(T.WEEKDAYS)
        text = f"I promised {person.first} I would send the {item} by {day}."
        fact = gold_fact(f"send {item}", f"Committed to sending {person.name} the {item} by {day}",
                         person.slug, [*kws, day][:2], "commitment")
    elif kind == "fact":
        target, kws = r.choice(T.WB_FACT)
        text = f"{person.first} said they hit {target}, ahead of plan."
        fact = gold_fact(f"target reached: {kws[0]}", f"{person.name} reported hitting {target}, ahead of plan",
                         person.slug, kws, "fact")
    else:
        pref, kws = r.choice(T.WB_PREFERENCE)
        text = f"{person.first} prefers {pref}."
        fact = gold_fact(f"prefers {kws[0]}", f"{person.name} prefers {pref}", person.slug, kws, "preference")
    return text, fact


def generate(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        person = ctx.founders.deal()
        company = u.company_of(person)
        b = FixtureBuilder(fid("wb", i), ["write-back"], "write-back")
        b.seed(person.slug, person_page(r, person))
        b.seed(company.slug, company_page(r, u, company))
        t = ctx.start_time()
        b.user(r.choice(T.WB_OPENERS).format(person=person.name, company=company.name), ts=iso(t))
        t += timedelta(minutes=1)
        b.assistant(r.choice(T.WB_ASSISTANT), ts=iso(t))
        # Strictly more than 30 minutes: the page splits into two segments (§6.1–6.2),
        # both with >= 2 messages, and every fact lives in the second one.
        t += timedelta(minutes=r.between(35, 95))
        kinds = r.shuffled(KINDS)[: r.between(2, 3)]
        claims = [_claim(ctx, k, person) for k in kinds]
        _check_keywords_disjoint([c[1] for c in claims])
        for k, (text, fact) in enumerate(claims):
            if k:
                t += timedelta(minutes=1)
            b.user(text, ts=iso(t), gold={**quiet(), "gold_facts": [fact]})
        out.append(b.finish("gap-" + "-".join(kinds)))
    return out


def _check_keywords_disjoint(facts: list[JsonDict]) -> None:
    # §6.3 consumes the first stored row matching ALL keywords; if claim A's keywords
    # also matched claim B's fact, scoring could pair them wrongly.
    for a in facts:
        for b in facts:
            if a is not b and all(k.lower() in b["fact"].lower() for k in a["match_keywords"]):
                raise AssertionError(f"keywords of {a['gist']!r} also match {b['fact']!r}")
