# ruff: noqa: E501 -- case tables read better unwrapped
"""Write tests/data/fidelity30/corpus: a BrainBench corpus whose every fixture leans on one rule of issue 30.

The expected result is gbrain's own run of it (scripts/gen-fidelity-reference); this file
only writes the inputs.  Each fixture's comment says which rule it probes and how.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2] / "tests" / "data" / "fidelity30" / "corpus"
FIXTURES: list[tuple[dict[str, Any], dict[str, Any]]] = []


def page(slug: str, front: str | None, body: str = "Body.\n") -> dict[str, str]:
    return {"slug": slug, "content": body if front is None else f"---\n{front}\n---\n\n{body}"}


def user(turn_id: Any, text: str, ts: str | None = None) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": "user", "text": text, **({"ts": ts} if ts else {})}


def bot(turn_id: Any, text: str, ts: str | None = None) -> dict[str, Any]:
    return {"turn_id": turn_id, "role": "assistant", "text": text, **({"ts": ts} if ts else {})}


def retrieval(fid: str, pages: list[dict[str, str]], turns: list[dict[str, Any]],
              gold: dict[str, dict[str, Any]], suites: tuple[str, ...] = ("know-to-ask", "push")) -> None:
    fixture = {"schema_version": 1, "fixture_id": fid, "suites": list(suites), "seed_pages": pages, "turns": turns}
    FIXTURES.append((fixture, {"fixture_id": fid, "turns": gold}))


def hit(*slugs: str) -> dict[str, Any]:
    return {"should_retrieve": True, "gold_slugs": list(slugs)}


QUIET: dict[str, Any] = {"should_retrieve": False}

# --- rule 5: CJK runs by gbrain's ranges; an astral CJK character once crashed the run ----------
retrieval("f30-cjk-astral", [
    page("people/tanaka", "title: 田中\ntype: person", "田中 runs the Osaka office.\n"),
    page("people/ext-a", "title: 㐀㐁\ntype: person", "Extension A name.\n"),
    page("people/kim", "title: 김철수\ntype: person", "Seoul lead.\n"),
], [
    user(1, "田中𠀀𠀁𠀂さんと話した"),
    user(2, "㐀㐁さんは?"),
    user(3, "김철수와 𪚥 만났다"),
], {"1": hit("people/tanaka"), "2": hit("people/ext-a"), "3": hit("people/kim")})
retrieval("f30-cjk-ambiguous", [
    page("people/wang-a", "title: 王明\ntype: person", "One Wang.\n"),
    page("people/wang-b", "title: 王明\ntype: person", "Another Wang.\n"),
    page("companies/huawei", "title: 华为\ntype: company", "Company.\n"),
], [user(1, "王明和华为的会议")], {"1": hit("companies/huawei")})

# --- rule 1: frontmatter values as js-yaml and String() make them --------------------------------
retrieval("f30-yaml-values", [
    page("concepts/eighteen", "title: 1.0e3 Club\ntype: concept"),  # a string: "1.0e3 Club"
    page("people/yesmin", "title: Yesmin Oduya\naliases: [yes, on, 2024-01-05, 42, Yessie]"),
    page("people/noor", "title: Noor Halvard\naliases: 'Nooro, , NH'"),
    page("concepts/date-title", "title: 2024-02-30\nsummary: 2024-01-05"),  # rolls to 2024-03-01
    page("concepts/float-title", "title: 1.\ntype: concept", "Float titled.\n"),
    page("concepts/seq-title", "title: [Gamma, Ray]\ntype: concept", "Seq titled.\n"),
    page("concepts/obj-title", "title: {a: 1}\ntype: concept", "Obj titled.\n"),
    page("concepts/eq", "title: Equals Sign\nvalue: =", "Equals body.\n"),
    page("concepts/ls", "title: Line\u2028Sep Plan\nnote: a\x85b", "Separator body.\n"),
    page("concepts/half", 'title: "Half\\ud83d Title"', "A lone half in the title.\n"),
], [
    user(1, "What did yessie say about the budget?"),
    user(2, "Ask nooro and nh about it"),
    user(3, "Is the 2024-03-01 page relevant to Gamma,Ray or [object Object]?"),
    user(4, "Check the Equals Sign note"),
    user(5, "And the Line\u2028Sep Plan"),
], {"1": hit("people/yesmin"), "2": hit("people/noor"), "3": QUIET, "4": hit("concepts/eq"), "5": QUIET})
REFUSED = {
    "f30-yaml-colon": "title: Re: budget review",
    "f30-yaml-collide": "title: Collide\n1: a\n1.0: b",
    "f30-yaml-nested-key": "title: Nested\n? [a, [b]]\n: x",
    "f30-yaml-nonprintable": "title: Bell\x07Ring",
    "f30-jsonb-nul": 'title: Nul Note\nnote: "a\\0b"',
    "f30-jsonb-surrogate": 'title: Half Note\nnote: "a\\ud83db"',
}
for fid, front in REFUSED.items():
    retrieval(fid, [page("concepts/ok", "title: Fine Page"), page("concepts/bad", front)],
              [user(1, "Tell me about the Fine Page")], {"1": hit("concepts/ok")})
retrieval("f30-yaml-accepted", [
    page("concepts/rolled", "title: Rolled Date\nwhen: 2024-02-30\nyes: no", "Rolled.\n"),
    page("concepts/tabbed", "title: Tab\tbed Page\nmeta:\n\tk: v", "Tabs.\n"),
    page("concepts/empty-entry", "title: Empty Entry\ntags: [, z, ]", "Empty entry.\n"),
    page("concepts/long-key", "title: Long Key\n" + "k" * 1100 + ": v", "Long.\n"),
], [user(1, "Rolled Date, Tab\tbed Page, Empty Entry and Long Key please")],
    {"1": hit("concepts/rolled", "concepts/tabbed", "concepts/empty-entry")})
retrieval("f30-openers", [
    page("concepts/y", None, "---yaml\ntitle: Yaml Opener\n---\nBody.\n"),
    page("concepts/j", None, '---json\n{"title": "Json Opener", "summary": "From json."}\n---\nBody.\n'),
    page("concepts/t", None, "---toml\ntitle = 'nope'\n---\n# Toml Heading\n"),
    page("concepts/lead", None, "\n---\ntitle: Lead Blank\n---\n# Real Lead Heading\n"),
    page("concepts/crlf", None, "---\r\ntitle: Crlf Page\r\n---\r\nBody.\r\n"),
], [user(1, "Yaml Opener and Json Opener"), user(2, "Toml Heading or Real Lead Heading or Crlf Page")],
    {"1": hit("concepts/y", "concepts/j"), "2": hit("concepts/t", "concepts/lead", "concepts/crlf")})
retrieval("f30-astral-doc", [page("concepts/ok", "title: Fine Page"), page("concepts/spread", "'😀x'")],
          [user(1, "Fine Page")], {"1": hit("concepts/ok")})

# --- rule 2: the content hash orders same-title pages, and codex keeps only the first ----------
for n, (tags_a, tags_b) in enumerate([
    ('["\uff5a", "😀"]', '["😀", "\uff5a"]'),
    ("[b, a, a]", "[a, b]"),
    ("[1.0, 2024-01-05]", "['1', 'x']"),
    ("'b, a, a'", "[a, b, a]"),
]):
    retrieval(f"f30-hash-{n}", [
        page(f"concepts/orion-a{n}", f"title: Orion Deck\ntags: {tags_a}\n10: x\n2: y\nz: {n}", "First.\n"),
        page(f"concepts/orion-b{n}", f"title: Orion Deck\ntags: {tags_b}\nquarantine: q{n}\ncaptured_at: c", "Second.\n"),
    ], [user(1, "Where is the Orion Deck?")], {"1": hit(f"concepts/orion-a{n}")})

# --- rule 3: titles -----------------------------------------------------------------------------
retrieval("f30-titles", [
    page("concepts/fenced", "type: concept", "```\n# Not This\n```\n# Fenced After\n"),
    page("concepts/hashes", "type: concept", "# Zeta#\n"),
    page("concepts/closing", "type: concept", "# Kappa Plan ##\n"),
    page("notes/straße-plan", None, "no heading\n"),
    page("notes/o-neil--deal", None, "no heading\n"),
    page("team/people/ada-byron", "title: Ada Byron", "Person by path.\n"),
], [
    user(1, "Fenced After and Not This"),
    user(2, "What about Zeta?"),
    user(3, "Zeta# and Kappa Plan"),
    user(4, "The Straße Plan and the O Neil  Deal"),
    user(5, "Did Byron reply?"),
], {"1": hit("concepts/fenced"), "2": QUIET, "3": hit("concepts/hashes", "concepts/closing"),
    "4": hit("notes/o-neil--deal"), "5": hit("team/people/ada-byron")})

# --- rule 4: synopsis fences (visible in injected tokens) ---------------------------------------
TAKES = "<!--- gbrain:takes:begin -->\nA private take that must not show.\n<!--- gbrain:takes:end -->\n"
FACTS = ("<!--- gbrain:facts:begin -->\n| # | claim | kind | confidence | visibility | notability | valid_from |"
         " valid_until | source | context |\n|---|---|---|---|---|---|---|---|---|---|\n| 1 | Hidden | fact | 1.0 |"
         " private | high | | | x | |\n<!--- gbrain:facts:end -->\n")
retrieval("f30-synopsis", [
    page("concepts/takes", "title: Takes Page", TAKES + "Visible prose.\n"),
    page("concepts/facts", "title: Facts Page", FACTS + "Prose after.\n"),
    page("concepts/code", "title: Code Page", "```takes\nShown now.\n```\nLater.\n"),
    page("concepts/num-summary", "title: Numbered Page\nsummary: 42", "Body prose.\n"),
    page("concepts/date-summary", "title: Dated Page\nsummary: 2024-01-05", "Body prose.\n"),
], [user(1, "Takes Page and Facts Page"), user(2, "Code Page, Numbered Page and Dated Page")],
    {"1": hit("concepts/takes", "concepts/facts"), "2": hit("concepts/code", "concepts/num-summary", "concepts/date-summary")})

# --- rule 6: case tables in JavaScript and in SQL -----------------------------------------------
retrieval("f30-case", [
    page("places/istanbul", "title: İstanbul Office\ntype: place", "Office.\n"),
    page("companies/cake", "title: ꟌAKE Labs\ntype: company", "New letter.\n"),
    page("people/odysseus", "title: Odysseus ΑΣΣΟΣ\ntype: person", "Greek.\n"),
    page("people/sigma", "title: Sigma Person\naliases: [ΑΣ]\ntype: person", "Alias with sigma.\n"),
    page("companies/circled", "title: Ⓐlpha Works\ntype: company", "Circled.\n"),
    page("people/ilyas", "title: Ilyas İnce\ntype: person", "Surname with dotted I.\n"),
], [
    user(1, "Visit the İstanbul Office and ꟌAKE Labs"),
    user(2, "Did ΑΣΣΟΣ write? And what of ας?"),
    user(3, "Ⓐlpha Works called; İnce too"),
], {"1": hit("places/istanbul", "companies/cake"), "2": hit("people/odysseus", "people/sigma"),
    "3": hit("companies/circled", "people/ilyas")})

# --- rule 11: gold as written -------------------------------------------------------------------
retrieval("f30-gold-case", [page("People/Ada-Lovelace", "title: Ada Lovelace\ntype: person", "Math.\n")],
          [user(1, "Ada Lovelace wrote again")], {"1": hit("People/Ada-Lovelace")})

# --- rule 10: turn ids as JSON.parse reads them (written raw below) -----------------------------
retrieval("f30-numbers", [page("people/grace", "title: Grace Hopper\ntype: person", "Navy.\n")], [
    user("@9007199254740993", "Grace Hopper called"),
    user("@1e21", "Grace Hopper again"),
    user("@2.0", "Grace Hopper thrice"),
], {"9007199254740992": hit("people/grace"), "1e+21": hit("people/grace"), "2": hit("people/grace")})

# --- rules 7, 8, 9: write-back ------------------------------------------------------------------
WB_TS = ["2024-01-05T10:00:00Z", "2024-01-05T10:01:00Z", "2024-01-05T10:02:00Z", "2024-01-05T10:03:00Z",
         "2024-01-05T10:04:00Z", "2024-01-05T10:05:00Z", "2024-01-05T10:06:00Z", "2024-01-05T10:07:00Z"]
LONG = "Budget detail " + "x" * 3300 + " the Petra renewal is at risk " + "😀" * 1700 + " END"
WB_TURNS = [
    "We decided the Aurora launch moves to March.",
    "Line one of the plan.\n\nLine three after a blank: the vendor is Krell.",
    "  Padded: the owner is Mireille.  ",
    "Windows line: the deadline is Friday.\r\nSecond line.",
    "Heading inside:\n## 2024-01-06\nthe auditor is Vance.",
    LONG,
    "Final: Ⓐlpha signed the deal.",
    "ok",
]
wb_turns = [(user if i % 2 == 0 else bot)(i + 1, text, WB_TS[i]) for i, text in enumerate(WB_TURNS)]
FACTS_BY_TURN = {
    1: ("Aurora launch moves to March", ["aurora", "march"]),
    2: ("vendor is Krell", ["krell"]),
    3: ("owner is Mireille", ["mireille"]),
    4: ("deadline is Friday", ["friday"]),
    5: ("auditor is Vance", ["vance"]),
    6: ("Petra renewal at risk", ["petra"]),
    7: ("Ⓐlpha signed the deal", ["ⓐlpha", "SIGNED"]),
}


def wb_gold(fid: str, facts: dict[int, tuple[str, list[str]]], extra: dict[str, Any] | None = None) -> dict:
    turns = {str(t): {"should_retrieve": False, "gold_facts": [
        {"gist": g, "fact": g + ".", "entity_slug": None, "match_keywords": kw}]} for t, (g, kw) in facts.items()}
    return {"fixture_id": fid, "turns": turns, **(extra or {})}


FIXTURES.append(({"schema_version": 1, "fixture_id": "f30-wb-lines", "suites": ["write-back"],
                  "turns": wb_turns}, wb_gold("f30-wb-lines", FACTS_BY_TURN)))
# Timestamps JavaScript reads: two-digit RFC 2822 years decide the century, and so the gaps.
TS_FORMS = ["Fri, 05 Jan 49 10:00:00 GMT", "Fri, 05 Jan 2049 10:10:00 GMT", "05 Jan 50 10:20 +0000",
            "1950-01-05t10:25:00z", "Jan 5 1950 10:26", "January 5, 1950 10:27 AM", "1950-01-05 10:28", "1950-01-05T10:29Z"]
ts_turns = [(user if i % 2 == 0 else bot)(i + 1, f"Note {i}: the code word is Item{i}.", ts)
            for i, ts in enumerate(TS_FORMS)]
FIXTURES.append(({"schema_version": 1, "fixture_id": "f30-wb-timestamps", "suites": ["write-back"], "turns": ts_turns},
                 wb_gold("f30-wb-timestamps", {i + 1: (f"code word Item{i}", [f"item{i}"]) for i in range(8)})))

# Continuity: the reader's probe is ILIKE in gbrain's PGLite (musl's case table); expected slugs as written.
writer_turns = [user(1, "We chose Ⓐlpha Freight for shipping.", "2024-02-01T09:00:00Z"),
                bot(2, "Noted: Ⓐlpha Freight it is.", "2024-02-01T09:01:00Z"),
                user(3, "And the İzmir depot closes.", "2024-02-01T09:02:00Z"),
                bot(4, "Understood, the İzmir depot closes.", "2024-02-01T09:03:00Z")]
FIXTURES.append((
    {"schema_version": 1, "fixture_id": "f30-cont-writer", "suites": ["write-back", "continuity"],
     "continuity": {"pair_id": "f30-pair", "pair_role": "writer"}, "turns": writer_turns},
    wb_gold("f30-cont-writer", {1: ("chose Ⓐlpha Freight", ["ⓐlpha"]), 3: ("İzmir depot closes", ["izmir"])}),
))
FIXTURES.append((
    {"schema_version": 1, "fixture_id": "f30-cont-reader", "suites": ["continuity"],
     "continuity": {"pair_id": "f30-pair", "pair_role": "reader"},
     "seed_pages": [page("companies/alpha-freight", "title: Alpha Freight\ntype: company", "Shipping.\n")],
     "turns": [user(1, "Which shipper did we pick? Alpha Freight?")]},
    {"fixture_id": "f30-cont-reader", "turns": {"1": QUIET}, "continuity": {"pair_id": "f30-pair", "decisions": [
        {"decision_id": "shipper", "expected_slugs": ["Companies/Alpha-Freight"], "match_keywords": ["ⓐlpha"]},
        {"decision_id": "depot", "expected_slugs": [], "match_keywords": ["İZMİR"]},
        {"decision_id": "depot-plain", "expected_slugs": [], "match_keywords": ["depot closes"]},
    ]}},
))


def dump(doc: dict[str, Any]) -> str:
    # Turn ids written "@<literal>" go out as raw JSON number literals.
    text = json.dumps(doc, ensure_ascii=False, indent=2)
    for literal in ("9007199254740993", "1e21", "2.0"):
        text = text.replace(f'"@{literal}"', literal)
    return text + "\n"


if __name__ == "__main__":
    shutil.rmtree(ROOT, ignore_errors=True)
    (ROOT / "fixtures").mkdir(parents=True)
    (ROOT / "gold").mkdir()
    for fixture, gold in FIXTURES:
        fid = fixture["fixture_id"]
        (ROOT / "fixtures" / f"{fid}.fixture.json").write_text(dump(fixture), encoding="utf-8")
        (ROOT / "gold" / f"{fid}.gold.json").write_text(dump(gold), encoding="utf-8")
    print(f"wrote {len(FIXTURES)} fixtures under {ROOT}", file=sys.stderr)
