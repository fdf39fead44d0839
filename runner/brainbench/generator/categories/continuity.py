"""continuity: writer records a decision (write-back), reader later asks where we landed."""

from __future__ import annotations

from datetime import timedelta

from brainbench.generator import templates as T
from brainbench.generator.categories.context import Ctx, fid, iso
from brainbench.generator.model import FixtureBuilder, GenFixture, gold_fact, quiet, retrieve
from brainbench.generator.pages import company_page, person_page

DECISIONS = ("pass", "lead", "wait")


def generate(ctx: Ctx, n: int) -> list[GenFixture]:
    out: list[GenFixture] = []
    u, r = ctx.universe, ctx.prng
    for i in range(1, n + 1):
        pair_id = fid("cont", i)
        decision = DECISIONS[(i - 1) % len(DECISIONS)]
        founder = ctx.founders.deal()
        company = u.company_of(founder)
        rnd = r.choice(T.CONT_ROUNDS)
        c = company.name
        if decision == "pass":
            say = f"We decided to pass on the {c} {rnd} round; the valuation is too rich for us right now."
            fact = f"Decided to pass on the {c} {rnd} round because the valuation is too rich"
        elif decision == "lead":
            say = f"We agreed to lead the {c} {rnd} round and take the board seat."
            fact = f"Agreed to lead the {c} {rnd} round and take a board seat"
        else:
            say = f"We will wait on {c} until next quarter's numbers are in before deciding."
            fact = f"Decided to wait on {c} until next quarter's numbers are in"
        keywords = [decision, c]
        decisions = {"pair_id": pair_id, "decisions": [
            {"decision_id": "d1", "expected_slugs": [company.slug], "match_keywords": keywords}]}

        w = FixtureBuilder(f"{pair_id}-writer", ["write-back", "continuity"], "continuity")
        w.pair(pair_id, "writer")
        w.seed(company.slug, company_page(r, u, company))
        w.seed(founder.slug, person_page(r, founder))
        # Three turns one minute apart: a single segment (no gap), ts on every turn (§1.3).
        t = ctx.start_time()
        w.user(r.choice(T.CONT_OPENERS).format(company=c, round=rnd), ts=iso(t))
        w.assistant(r.choice(T.CONT_ASSISTANT), ts=iso(t + timedelta(minutes=1)))
        w.user(say, ts=iso(t + timedelta(minutes=2)), gold={**quiet(), "gold_facts": [
            gold_fact(f"{decision} decision on {c}", fact, company.slug, keywords, "commitment")]})
        w.gold_continuity = decisions

        rd = FixtureBuilder(f"{pair_id}-reader", ["continuity"], "continuity")
        rd.pair(pair_id, "reader")
        rd.user(r.choice(T.READER_PROBES).format(company=c), gold=retrieve([company.slug]))
        rd.gold_continuity = decisions
        out += [w.finish(f"writer-{decision}", pair_id), rd.finish(f"reader-{decision}", pair_id)]
    return out
