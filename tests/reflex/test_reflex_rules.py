"""Each extraction and resolution rule of the reflex (spec §3), on a small brain of our own."""

from __future__ import annotations

import psycopg
import pytest
from brainbench.brain.store import ensure_sources, import_page
from brainbench.harnesses.injected import estimate_tokens, slugs_in_text
from brainbench.reflex.candidates import extract_candidates, extract_candidates_from_window
from brainbench.reflex.labels import Trust, render_inline
from brainbench.reflex.render import (
    HotFactLine,
    Pointer,
    Volunteered,
    hot_fact_line,
    render_pointer_block,
    render_reflex_addition,
)
from brainbench.reflex.resolve import resolve_pointers, slugify


def person(title: str, alias: str, summary: str) -> str:
    return f"---\ntitle: {title}\ntype: person\naliases: [{alias}]\nsummary: {summary}\n---\n\n{title}.\n"


def company(title: str, summary: str) -> str:
    return f"---\ntitle: {title}\ntype: company\nsummary: {summary}\n---\n\n{title}.\n"


PAGES = {
    "people/odile-brackwater": person("Odile Brackwater", "odile", "Founder of Quillstone."),
    "people/odile-fennimore": person("Odile Fennimore", "odile", "Partner at Larchmere."),
    "people/tamsin-okonkwo": person("Tamsin Okonkwo", "tamsin", "Angel investor."),
    "people/ravi-okonkwo": person("Ravi Okonkwo", "ravi", "Engineer."),
    "people/perpetua-vane": person("Perpetua Vane", "perpetua", "Operator."),
    "companies/quillstone": company("Quillstone", "Ledger software."),
    "companies/larchmere-capital": company("Larchmere Capital", "A fund."),
    "concepts/monday-review": company("Monday Review", "Weekly ritual."),
}


@pytest.fixture
def seeded(brain: tuple[psycopg.Connection, str]) -> psycopg.Connection:
    conn, _ = brain
    ensure_sources(conn, ["teambrain"])
    for slug, content in PAGES.items():
        assert import_page(conn, slug, content, "default")[0] == "imported"
    # A twin in another source, and a page that exists only there.
    import_page(conn, "people/perpetua-vane", person("Perpetua Vane", "perpetua", "TEAM copy."), "teambrain")
    import_page(conn, "companies/hollowfen", company("Hollowfen", "Team-only."), "teambrain")
    return conn


def slugs(conn: psycopg.Connection, text: str, source: str = "default", **kw: object) -> list[str]:
    return [p.slug for p in resolve_pointers(conn, source, extract_candidates(text), **kw)]  # type: ignore[arg-type]


def queries(text: str) -> list[tuple[str, bool]]:
    return [(c.query, c.weak) for c in extract_candidates(text)]


def test_sentence_start_common_words_and_weekdays_are_dropped() -> None:
    assert ("Monday", False) not in queries("Monday again. Nothing new.")
    assert ("Good", False) not in queries("Good morning! Hope the weekend was fine.")
    assert ("Hope", False) in queries("Good morning! Hope the weekend was fine.")
    # Mid-sentence, a common word is kept: it may be a name.
    assert ("Monday", False) in queries("Let us meet on Monday to decide.")


def test_stopword_led_runs_are_trimmed_and_possessives_stripped() -> None:
    assert queries("Did Quillstone ever reply?")[:2] == [("Did Quillstone", False), ("Quillstone", False)]
    assert ("Tamsin Okonkwo", False) in queries("I read Tamsin Okonkwo's memo.")


def test_handles_numbers_and_weak_lowercase_candidates() -> None:
    got = queries("ask @odile about 2026 plans with tamsin")
    assert ("odile", False) in got and ("tamsin", True) in got
    assert not any(q == "2026" for q, _ in got)


def hash_order(conn: psycopg.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT slug FROM pages WHERE source_id = 'default' ORDER BY content_hash")]


def test_exact_titles_resolve_in_content_hash_order(seeded: psycopg.Connection) -> None:
    got = slugs(seeded, "What did Tamsin Okonkwo think of Quillstone?")
    assert got == sorted(["people/tamsin-okonkwo", "companies/quillstone"], key=hash_order(seeded).index)


def test_unknown_names_and_near_misses_stay_silent(seeded: psycopg.Connection) -> None:
    assert slugs(seeded, "Have you met Bartholomew Quince?") == []
    assert slugs(seeded, "What about Tamsin Okonkwoe?") == []  # near-miss surname
    assert slugs(seeded, "Ping Tamsin about it.") == []  # verb glued into one run


def test_lowercase_alias_and_capitalized_alias(seeded: psycopg.Connection) -> None:
    assert slugs(seeded, "remind me what tamsin said") == ["people/tamsin-okonkwo"]
    assert slugs(seeded, "I'm meeting Tamsin tomorrow.") == ["people/tamsin-okonkwo"]


def test_ambiguous_alias_and_surname_stay_silent(seeded: psycopg.Connection) -> None:
    assert slugs(seeded, "I'm seeing Odile later.") == []  # two people alias "odile"
    assert slugs(seeded, "Any news from Okonkwo?") == []  # two people share the surname


def test_unique_surname_resolves_on_person_pages(seeded: psycopg.Connection) -> None:
    pointers = resolve_pointers(seeded, "default", extract_candidates("Any news from Brackwater?"))
    assert [(p.slug, p.arm, p.display) for p in pointers] == [
        ("people/odile-brackwater", "title-surname", "Odile Brackwater")]


def test_slug_suffix_arm(seeded: psycopg.Connection) -> None:
    assert slugify("Larchmère Capital!") == "larchmere-capital"
    text = "Talk to larchmere-capital soon, Larchmere-Capital."
    pointers = resolve_pointers(seeded, "default", extract_candidates(text))
    assert [(p.slug, p.arm) for p in pointers] == [("companies/larchmere-capital", "slug-suffix")]


def test_budget_keeps_content_hash_order(seeded: psycopg.Connection) -> None:
    text = "Tamsin Okonkwo, Ravi Okonkwo, Perpetua Vane and Quillstone met."
    everything = slugs(seeded, text, max_pointers=10)
    assert len(everything) == 4
    assert everything == sorted(everything, key=hash_order(seeded).index)
    assert slugs(seeded, text, max_pointers=1) == everything[:1]
    assert slugs(seeded, text, max_pointers=3) == everything[:3]


def test_re_mention_suppression_modes(seeded: psycopg.Connection) -> None:
    prior = "\nWhat about Quillstone?\n" + render_pointer_block([])
    assert slugs(seeded, "And Quillstone again?", prior_context=prior) == []  # title in prior (slug-and-title)
    assert slugs(seeded, "And Quillstone again?", prior_context=prior, suppression="slug-only") == [
        "companies/quillstone"]
    assert slugs(seeded, "And Quillstone again?", prior_context="see `companies/quillstone`",
                 suppression="slug-only") == []


def test_cross_source_twins_resolve_to_the_active_source(seeded: psycopg.Connection) -> None:
    default = resolve_pointers(seeded, "default", extract_candidates("What about Perpetua Vane?"))
    team = resolve_pointers(seeded, "teambrain", extract_candidates("What about Perpetua Vane?"))
    assert [p.synopsis for p in default] == ["Operator."]
    assert [p.synopsis for p in team] == ["TEAM copy."]
    assert slugs(seeded, "Anything on Hollowfen?") == []  # exists only in teambrain
    assert slugs(seeded, "Anything on Hollowfen?", source="teambrain") == ["companies/hollowfen"]


def test_window_ranks_newest_and_user_mentions_first() -> None:
    window = [("user", "Quillstone raised."), ("assistant", "Tamsin Okonkwo led it."), ("user", "And Ravi Okonkwo?")]
    cands = extract_candidates_from_window(window)
    strong = [c.query for c in cands if not c.weak]
    # Newest user turn first (its untrimmed run, then the trimmed one), the oldest last.
    assert strong[:2] == ["And Ravi Okonkwo", "Ravi Okonkwo"] and strong[-1] == "Quillstone"
    tamsin = next(c for c in cands if c.query == "Tamsin Okonkwo")
    assert not tamsin.user_mention and not tamsin.in_newest_turn


def test_render_and_tokens() -> None:
    text = "## Brain pages mentioned this turn\n- **A** → `people/a` — x\n- **B** → `people/b`"
    assert slugs_in_text(text + "\n→ `people/a`") == ["people/a", "people/b"]
    assert estimate_tokens("abcde") == 2 and estimate_tokens("") == 0 and estimate_tokens("😀") == 1


def test_volunteered_lines_use_their_own_display_else_the_pointers() -> None:
    pointer = Pointer("Widget Co", "companies/widget-co", "default", "A company.", "title", 0.9, "widget co")
    folded = render_reflex_addition("", [Volunteered(pointer, 0.85, 'title "Widget  Co"', display="Widget Co!")])
    plain = render_reflex_addition("", [Volunteered(pointer, 0.85, 'title "Widget Co"')])
    assert folded.splitlines()[1] == '- **Widget Co!** → `companies/widget-co` (0.85, title "Widget  Co") — A company.'
    assert plain.splitlines()[1] == '- **Widget Co** → `companies/widget-co` (0.85, title "Widget Co") — A company.'


def test_a_hot_fact_without_trust_is_its_text() -> None:
    fact = HotFactLine("Alice likes tea", "people/alice", 0.5)
    assert hot_fact_line(fact) == "- Alice likes tea [people/alice] (0.50)"
    assert hot_fact_line(HotFactLine("No entity", None, 1.0), labeled=False) == "- No entity (1.00)"


def test_a_labelled_pointer_carries_its_label_before_the_synopsis() -> None:
    trust = Trust("agent_written", "mcp:put_page")
    pointer = Pointer("Widget Co", "companies/widget-co", "default", "A company.", "title", 0.9, "widget co", trust)
    line = render_pointer_block([pointer]).splitlines()[-1]
    assert line.startswith("- **Widget Co** → `companies/widget-co` — ")
    assert line.endswith(f"{render_inline('A company.', trust)} (use get_page before relying on details)")
