"""The reference diagnosis follows the run's behaviour: under gbrain 0.60, openclaw's volunteer arm
injects what its pointer budget drops, so such a page is not explained as lost to the budget."""

from __future__ import annotations

import psycopg
from brainbench.brain.store import import_page
from brainbench.diagnosis.reference import _reference, policies
from brainbench.memory.reference.stamping import writer

NAMES = ("Ada Quorn", "Bo Lindqvist", "Cy Marrow", "Dee Fallow")
PROMPT = "Update me on Ada Quorn, Bo Lindqvist, Cy Marrow and Dee Fallow."


def test_the_fourth_page_is_volunteered_under_060_and_over_budget_under_046(
        brain: tuple[psycopg.Connection, str]) -> None:
    conn, _ = brain
    for name in NAMES:
        slug = "people/" + name.lower().replace(" ", "-")
        import_page(conn, slug, f"---\ntitle: {name}\ntype: person\naliases: [{name}]\n---\n\n{name}.\n", "default")
    fates = {}
    for behaviour in ("0.46", "0.60"):
        ref = _reference(conn, "default", policies(behaviour)["openclaw"], PROMPT, [], "")  # type: ignore[arg-type]
        fates[behaviour] = {p.slug: p.fate for p in ref.picks}
    assert fates["0.46"]["people/dee-fallow"] == "over_budget"
    assert fates["0.60"]["people/dee-fallow"] == "injected"
    assert all(fates[b]["people/ada-quorn"] == "injected" for b in fates)
    # A page activation control withholds is not one the reference would inject.
    with writer(conn, "agent_written", {"channel": "mcp:put_page"}):  # the tier trigger's only way in
        conn.execute("UPDATE pages SET trust_tier = 'agent_written' WHERE slug = 'people/ada-quorn'")
    conn.execute("INSERT INTO write_gate_receipts (target_table, target_id, source_id, content_hash, tier,"
                 " detector_version, verdict, reason_families) SELECT 'pages', id::text, 'default', 'h',"
                 " 'agent_written', 2, 'flag', '{override}' FROM pages WHERE slug = 'people/ada-quorn'")
    conn.execute("INSERT INTO config (key, value) VALUES ('trust.agent_activation', 'suppress')")
    ref = _reference(conn, "default", policies("0.60")["openclaw"], PROMPT, [], "")  # type: ignore[arg-type]
    assert "people/ada-quorn" not in {p.slug for p in ref.picks}
    assert {p.slug: p.fate for p in ref.picks}["people/dee-fallow"] == "injected"
