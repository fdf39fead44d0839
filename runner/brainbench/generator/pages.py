"""Seed-page markdown for people, companies and funds (spec §2.4 / §12.3).

Every page has frontmatter ``title``, ``type`` and a one-line ``summary`` (synopses come
from it, §3.4); person pages register their lowercase first name as the only alias
(§2.5). Summaries never contain ``": "`` or a trailing ``:`` so the frontmatter parses as
plain YAML scalars without gbrain's quoting fix-up.
"""

from __future__ import annotations

from brainbench.generator.prng import Prng
from brainbench.generator.universe import Company, Fund, Person, Universe

_PERSON_BODY = (
    "{name} founded {org} and still runs product there.",
    "{name} started {org} after a long stint in operations.",
    "{name} is the founder of {org}; we met through a portfolio dinner.",
)
_PARTNER_BODY = (
    "{name} is a partner at {org} and often co-invests with us.",
    "{name} joined {org} as a partner and leads its early-stage checks.",
)
_COMPANY_BODY = (
    "{name} builds {sector} tools. {founder} is the founder.",
    "{name} works on {sector}; the team is small and ships quickly. Founded by {founder}.",
)
_FUND_BODY = (
    "{name} is a venture fund focused on {focus}.",
    "{name} invests in {focus} and likes to co-lead seed rounds.",
)


def _page(title: str, type_: str, summary: str, body: str, alias: str | None = None) -> str:
    for value in (title, summary):
        if ": " in value or value.endswith(":") or "#" in value:
            raise ValueError(f"frontmatter value would need YAML quoting: {value!r}")
    lines = ["---", f"title: {title}", f"type: {type_}"]
    if alias is not None:
        lines.append(f"aliases: [{alias}]")
    lines += [f"summary: {summary}", "---", "", body]
    return "\n".join(lines) + "\n"


def person_page(prng: Prng, person: Person, *, summary: str | None = None, body: str | None = None) -> str:
    templates = _PERSON_BODY if person.role == "founder" else _PARTNER_BODY
    default_summary = (f"Founder of {person.org}." if person.role == "founder"
                       else f"Partner at {person.org}.")
    text = body if body is not None else prng.choice(templates).format(name=person.name, org=person.org)
    return _page(person.name, "person", summary or default_summary, text, alias=person.alias)


def company_page(prng: Prng, universe: Universe, company: Company, *, body: str | None = None) -> str:
    founder = universe.founder_of(company).name if company in universe.companies else "a first-time founder"
    text = body if body is not None else prng.choice(_COMPANY_BODY).format(
        name=company.name, sector=company.sector, founder=founder)
    summary = f"{company.sector.capitalize()} company founded by {founder}."
    return _page(company.name, "company", summary, text)


def fund_page(prng: Prng, fund: Fund) -> str:
    text = prng.choice(_FUND_BODY).format(name=fund.name, focus=fund.focus)
    return _page(fund.name, "org", f"Venture fund focused on {fund.focus}.", text)


def org_page(prng: Prng, universe: Universe, person: Person) -> tuple[str, str]:
    """(slug, content) of the page for a person's company or fund."""
    if person.role == "founder":
        company = universe.company_of(person)
        return company.slug, company_page(prng, universe, company)
    fund = universe.fund_of(person)
    return fund.slug, fund_page(prng, fund)


def raw_page(title: str, type_: str, summary: str, body: str, alias: str | None = None) -> str:
    return _page(title, type_, summary, body, alias)
