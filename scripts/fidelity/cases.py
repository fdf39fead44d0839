# ruff: noqa: E501 -- case tables read better unwrapped
"""Write tests/data/fidelity30/cases.json: the inputs of issue 30's reference data.

Only inputs live here; every expected value is derived from gbrain's code by
scripts/fidelity/reference.ts (scripts/gen-fidelity-reference runs both).  Each list
targets one rule of issue 30; the comments say what a case probes.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[2] / "tests" / "data" / "fidelity30" / "cases.json"


def page(front: str | None, body: str = "Body text.\n", slug: str = "concepts/probe", opener: str = "---\n") -> dict:
    content = body if front is None else f"{opener}{front}\n---\n\n{body}"
    return {"slug": slug, "content": content}


# --- rule 1: YAML scalars as js-yaml 3 reads them, and String() of each --------------------
SCALARS = [
    "1e3", "1.", "3.0e+2", "1_000", "0x1F", "0o17", "012", "08", "0b101", "1:30", "1:30.5", "190:20:30", "-0", "-0.0",
    ".5", "+1", ".inf", "-.inf", ".nan", ".NaN", "1e400", "12345678901234567890", "9007199254740993", "0.1e1",
    "yes", "no", "on", "off", "y", "n", "true", "True", "TRUE", "tRUE", "false", "null", "Null", "NULL", "~", "",
    "2024-01-05", "2024-1-5", "2024-01-05T10:00:00Z", "2024-01-05 10:00:00", "2024-01-05t10:00:00.123456+05:30",
    "2024-01-05T10:00:00 -5", "2024-02-30", "2023-02-29", "2024-13-01", "0050-01-01", "9999-12-32", "2024-01-05T25:99:99",
    "=", "<<", "[a, b]", "[1, [2, 3], ~]", "{a: 1}", "[]", "{}", "!!str 1", "!!int \"12\"", "!!float 1", "!!int x",
    "!!binary aGk=", "!!set {a, b}", "!!omap [{a: 1}, {b: 2}]", "!!pairs [{a: 1}, {a: 2}]", "! 1", "!foo x",
    "'single ''quoted'''", "\"dq \\/ \\t \\x41 \\u00e9 \\N \\_ \\L\"", "plain # comment", "a:b", "@at", "`tick",
    "&anchor 5", "|\n  block\n  lines", ">-\n  folded\n  text", "multi\n  line plain", "a\tb", "  spaced  ",
]
pages: list[dict] = []
for i, value in enumerate(SCALARS):
    for key in ("title", "type", "note"):
        pages.append({"id": f"scalar-{key}-{i}", **page(f"{key}: {value}")})
    pages.append({"id": f"scalar-tags-{i}", **page(f"tags: {value}")})
    pages.append({"id": f"scalar-summary-{i}", **page(f"summary: {value}")})
    pages.append({"id": f"scalar-aliases-{i}", **page(f"aliases: {value}")})
    pages.append({"id": f"scalar-list-{i}", **page(f"tags: [{value}, z]\naliases: [{value}, z]")})

# Keys: String() conversion, collisions after it, merges, JS property order in the hash.
KEYS = {
    "int-float-collide": "1: a\n1.0: b",
    "null-tilde-collide": "null: a\n~: b",
    "bool-key": "true: x\nfalse: y\nTrue: z",
    "date-key": "2024-01-05: x",
    "seq-key": "[a, b]: x\n? [c, ~]\n: y",
    "map-key": "{a: 1}: x",
    "nested-seq-key": "? [a, [b]]\n: x",
    "two-map-keys": "{a: 1}: x\n{b: 2}: y",
    "merge-order": "a: 1\n<<: {b: 2, a: 9}\nc: 3",
    "merge-list": "<<: [{x: 1}, {x: 2, y: 3}]\nz: 4",
    "merge-override": "<<: {a: 1}\na: 2",
    "merge-override-twice": "<<: {a: 1}\na: 2\na: 3",
    "merge-seq-source": "<<: [[p, q]]\nz: 1",
    "merge-scalar": "<<: 5",
    "merge-alias": "base: &b {k: v, w: 1}\nchild:\n  <<: *b\n  w: 2",
    "proto-key": "__proto__: x\nother: y",
    "index-keys": "b: 1\n10: x\n2: y\na: 2\n-1: z\n01: w\n4294967295: big\n4294967294: last",
    "anchor-redefined": "a: &x 1\nb: &x 2\nc: *x",
    "undefined-alias": "a: *nope",
    "recursive-alias": "a: &x [*x]",
    "duplicate-plain": "title: A\ntitle: B",
    "ephemeral": "captured_at: 2024-01-01\ningested_at: x\nquarantine: q\ncontent_flag: c\nembed_skip: e\nkeep: k",
    "nested-date": "meta:\n  when: 2024-01-05T10:00:00Z\n  list: [2024-02-30, 1e3]",
    "empty-value": "a:\nb: ~\nc: ''",
    "deep": "a: " + "[" * 60 + "]" * 60,
}
pages += [{"id": f"key-{k}", **page(v)} for k, v in KEYS.items()]

# Documents gbrain refuses or accepts (gray-matter's block vs. the validator's block).
DOCS = {
    "re-colon": page("title: Re: hello"),
    "re-colon-quoted": page('title: "Re: hello"'),
    "colon-end": page("title: Note:"),
    "colon-other-key": page("note: a: b"),
    "colon-comment": page("title: Re: x # c"),
    "colon-indented": page("meta:\n  title: Re: x"),
    "colon-dash-key": page("my-key: a: b"),
    "colon-crlf": {"slug": "concepts/probe", "content": "---\r\ntitle: Re: hi\r\n---\r\nBody.\r\n"},
    "scalar-doc": page("just text"),
    "list-doc": page("- a\n- b"),
    "number-doc": page("42"),
    "null-doc": page("~"),
    "date-doc": page("2024-01-05"),
    "astral-doc": page("'😀x'"),
    "empty": {"slug": "concepts/probe", "content": "---\n---\nBody."},
    "comment-only": page("# just a comment\n  # another"),
    "blank-lines-before": {"slug": "concepts/probe", "content": "\n\n---\ntitle: T\n---\nBody."},
    "blank-lines-before-bad": {"slug": "concepts/probe", "content": "\n---\ntitle: [open\n---\nBody."},
    "bom": {"slug": "concepts/probe", "content": "\ufeff---\ntitle: Bom\n---\nBody."},
    "bom-body": {"slug": "concepts/bom-body", "content": "\ufeff# Heading\nBody."},
    "crlf": {"slug": "concepts/probe", "content": "---\r\ntitle: Crlf\r\ntype: person\r\n---\r\nBody.\r\n"},
    "unclosed": {"slug": "concepts/probe", "content": "---\ntitle: Open\nBody."},
    "unclosed-bad": {"slug": "concepts/probe", "content": "---\ntitle: [open\nBody."},
    "close-dashes4": {"slug": "concepts/probe", "content": "---\ntitle: T\n----\nBody."},
    "close-dashes-x": {"slug": "concepts/probe", "content": "---\ntitle: T\n---x\nBody."},
    "close-trailing-space": {"slug": "concepts/probe", "content": "---\ntitle: T\n---  \nBody."},
    "open-trailing-space": {"slug": "concepts/probe", "content": "---  \ntitle: T\n---\nBody."},
    "four-dashes-open": {"slug": "concepts/probe", "content": "----\ntitle: T\n---\nBody."},
    "yaml-opener": {"slug": "concepts/probe", "content": "---yaml\ntitle: Yaml\n---\nBody."},
    "yml-opener": {"slug": "concepts/probe", "content": "---yml\ntitle: Yml\n---\nBody."},
    "YAML-opener": {"slug": "concepts/probe", "content": "--- YAML \ntitle: Upper\n---\nBody."},
    "json-opener": {"slug": "concepts/probe", "content": '---json\n{"title": "Json", "n": 1.0, "tags": ["b", "a"]}\n---\nBody.'},
    "json-opener-bad": {"slug": "concepts/probe", "content": "---json\n{title: nope}\n---\nBody."},
    "json-opener-dup": {"slug": "concepts/probe", "content": '---json\n{"a": 1, "b": 2, "a": 3}\n---\nBody.'},
    "toml-opener": {"slug": "concepts/probe", "content": "---toml\ntitle = 'x'\n---\nBody."},
    "opener-no-newline": {"slug": "concepts/probe", "content": "---title: x"},
    "yaml-opener-bad": {"slug": "concepts/probe", "content": "---yaml\ntitle: [open\n---\nBody."},
    "doc-end-marker": page("title: T\n..."),
    "two-docs": page("a: 1\n...\n---\nb: 2"),
    "tab-indent": page("meta:\n\tk: v"),
    "indented-first": page("  title: Indented\n  type: person"),
    "u2028-plain": page("title: A\u2028B"),
    "u2029-plain": page("note: A\u2029B"),
    "nel-plain": page("title: A\x85B"),
    "u2028-quoted": page('title: "A\u2028B"'),
    "u2028-key": page("ke\u2028y: v"),
    "u2028-comment": page("title: T # c\u2028d"),
    "nul": page("title: A\x00B"),
    "del": page("title: A\x7fB"),
    "esc": page("title: A\x1bB"),
    "fffe": page("title: A\ufffeB"),
    "c1": page("title: A\x90B"),
    "nbsp": page("title: A\xa0B"),
    "equals": page("title: T\nvalue: ="),
    "impossible-date": page("title: T\nwhen: 2024-02-30"),
    "impossible-date-title": page("title: 2024-02-30"),
    "long-key": page("k" * 1100 + ": v"),
    "quote-ambiguous-only-top": page("a:\n  b: c: d"),
    "leading-blank-then-body": {"slug": "concepts/probe", "content": "  \n\nNo frontmatter # here\n# Real Title\n"},
    # Escapes that reach the database: a NUL or a lone surrogate half in a JSON string (jsonb
    # refuses both) or in the title (PGLite's UTF-8 wire turns a lone half into U+FFFD).
    "nul-escape-note": page('title: T\nnote: "a\\0b"'),
    "nul-escape-title": page('title: "a\\0b"'),
    "surrogate-escape-note": page('title: T\nnote: "a\\ud83db"'),
    "surrogate-escape-title": page('title: "a\\ud83db"'),
    "surrogate-escape-alias": page('title: T\naliases: ["\\ud83d"]'),
}
pages += [{"id": f"doc-{k}", **v} for k, v in DOCS.items()]

# --- rule 2: tags in the hash ---------------------------------------------------------------
TAGS = {
    "dups": "tags: [b, a, a, B]",
    "utf16-order": "tags: [\"\uff5a\", \"😀\", \"\ue000\", \"\U0001f600\", z, \"é\"]",
    "string": "tags: 'b, a, , a ,c'",
    "number": "tags: 5",
    "zero": "tags: 0",
    "true": "tags: true",
    "mixed": "tags: [1.0, null, [x, y], {a: 1}, 2024-01-05, true, 1e3, '']",
    "object": "tags: {a: 1}",
    "date": "tags: 2024-01-05",
    "empty-string": "tags: ''",
    "empty-list": "tags: []",
    "tags-and-others": "zeta: 1\ntags: [b, a]\nalpha: 2",
}
pages += [{"id": f"tags-{k}", **page(v)} for k, v in TAGS.items()]

# --- rule 3: titles ---------------------------------------------------------------------------
H1 = {
    "plain": "# Plain Title\nBody.",
    "fenced": "```\n# Not Title\n```\n# After Fence\n",
    "tilde-fenced": "~~~\n# Not\n~~~\n# Tilde After\n",
    "mixed-fence": "```\n~~~\n# Still Fenced\n```\n# Out\n",
    "unclosed-fence": "```\n# Never\n",
    "no-space": "#NoSpace\n# Spaced\n",
    "h2-only": "## Only H2\n",
    "csharp": "# C#\n",
    "closing": "# Title ##\n",
    "closing-tight": "# Title##\n",
    "closing-spaced": "# Title #  \n",
    "only-hashes": "# ##\n",
    "u2028": "# A\u2028B\n# Fallback\n",
    "cr": "# Carriage\r\nBody\r\n",
    "tab": "#\tTabbed\n",
    "nbsp": "#\xa0Nbsp Title\n",
    "indented": " # Indented\n# Real\n",
    "trailing-ws": "# Spaces   \n",
    "empty-title-field": None,
}
for k, body in H1.items():
    if body is None:
        pages.append({"id": "h1-title-empty", **page("title: ''", "# From H1\n")})
        pages.append({"id": "h1-title-spaces", **page("title: '   '", "# From H1 Too\n")})
        pages.append({"id": "h1-title-null", **page("title: ~", "# From H1 Null\n")})
        continue
    pages.append({"id": f"h1-{k}", **page("type: note", body)})
HUMANIZE = ["notes/straße-café", "x/a--b", "x/a_b-c", "x/ǆ-dž", "x/ß", "x/ĳssel", "x/1st-place", "x/o'neil",
            "x/émile-zola", "x/x.md", "x/note.MD", "x/ﬁne", "x/İstanbul", "x/ǅemal", "x/σς", "x/ñandú",
            "x/δέλτα-beta", "x/__init__", "x/a.b.c", "x/ünïcode_mix-up"]
pages += [{"id": f"humanize-{i}", **page(None, "no heading here\n", slug=s)} for i, s in enumerate(HUMANIZE)]
TYPES = ["people/x", "team/people/x", "person/x", "companies/x", "company/x", "funds/x", "orgs/x", "concepts/x",
         "conversations/x", "wiki/concepts/x", "wiki/analysis/x", "life/events/x", "life/diary/x", "x/notes/y",
         "notes", "peoplex/y", "writing/a/people/b", "meetings/x", "cal/x", "yc/x", "deals/x", "media/x"]
pages += [{"id": f"type-{i}", **page("title: T", slug=s)} for i, s in enumerate(TYPES)]
pages += [{"id": "type-explicit-date", **page("type: 2024-01-05", slug="people/x")},
          {"id": "type-explicit-empty", **page("type: ''", slug="people/x")},
          {"id": "type-explicit-list", **page("type: [a, b]", slug="people/x")}]

# --- rule 4: synopsis fences -----------------------------------------------------------------
T_BEGIN, T_END = "<!--- gbrain:takes:begin -->", "<!--- gbrain:takes:end -->"
F_BEGIN, F_END = "<!--- gbrain:facts:begin -->", "<!--- gbrain:facts:end -->"
HEADER = "| # | claim | kind | confidence | visibility | notability | valid_from | valid_until | source | context |"
SEP = "|---|---|---|---|---|---|---|---|---|---|"
SYNOPSIS = {
    "takes-first": f"{T_BEGIN}\nSecret take.\n{T_END}\nPublic line. Second.",
    "takes-unclosed": f"{T_BEGIN}\nLeaked take.\nMore.",
    "takes-twice": f"{T_BEGIN}\na\n{T_END}\n{T_BEGIN}\nSecond take.\n{T_END}\nAfter.",
    "facts-first": f"{F_BEGIN}\n{HEADER}\n{SEP}\n| 1 | Secret | fact | 1.0 | private | high | | | x | |\n{F_END}\nProse.",
    "facts-world": f"{F_BEGIN}\n{HEADER}\n{SEP}\n| 1 | Open | fact | 0.875 | world | high | 2024-01-01 | | src | ctx |\n{F_END}",
    "facts-typed": f"{F_BEGIN}\n{HEADER} claim_metric | claim_value | claim_unit | claim_period |\n"
                   f"| 1 | ARR | fact | 0.9 | world | medium | | | s | | arr | 1,000 | USD | annual |\n{F_END}",
    "facts-typed-private": f"{F_BEGIN}\n{HEADER} claim_metric |\n| 1 | ARR | fact | 0.9 | private | medium | | | s | | arr |\n{F_END}",
    "facts-malformed": f"{F_BEGIN}\n| 1 | before header | fact | 1 | world | high | | | s |\n{HEADER}\n| 0 | zero | fact | 1 | world | high | | | s |\n| x | bad | nope | 1 | world | high | | | s |\n{F_END}",
    "facts-unbalanced": f"{F_END}\nReal prose.\n{F_BEGIN}",
    "facts-midline": f"Intro {F_BEGIN}\n{HEADER}\n{F_END} tail.",
    "code-fence-takes": "```takes\nhidden?\n```\nShown.",
    "code-fence-private": "```private-facts\nhidden?\n```\nAlso shown.",
    "other-gbrain-fence": "<!--- gbrain:timeline:begin -->\nKept line.\n<!--- gbrain:timeline:end -->",
    "front-block": "---\nnot: front\n---\nAfter block. Then.",
    "sentence": "First sentence! Second? Third.",
    "long": "word " * 60,
    "astral-clip": "𝐀" * 170,
    "heading-comment": "# H\n<!-- c -->\n\n  Indented prose.",
}
pages += [{"id": f"synopsis-{k}", **page("type: note", v)} for k, v in SYNOPSIS.items()]
pages += [
    {"id": "summary-number", **page("summary: 42")},
    {"id": "summary-date", **page("summary: 2024-01-05")},
    {"id": "summary-list", **page("summary: [a, b]")},
    {"id": "summary-ws", **page("summary: \"  a \\t\\n b  \"")},
    {"id": "summary-empty", **page("summary: '  '", "Body wins.\n")},
]
# Aliases: non-strings skipped, case tables, NFKC.
ALIASES = ["[Bob, 2024-01-05, 42, true, null, [x], 'Bob ']", "'Ann, Bo, , ann'", "ALEXANDRA İZMİR",
           "[ΟΔΥΣΣΕΥΣ, Σ, 'ΑΣ.']", "[ꟌAKE, Ɤx, ᲉA]", "[\"ﬁ\", \"Ⅻ\", \"ｆｕｌｌ\"]", "[\"'quoted'\", '[br]']",
           "42", "2024-01-05"]
pages += [{"id": f"aliases-{i}", **page(f"aliases: {a}")} for i, a in enumerate(ALIASES)]
# Titles whose SQL lower() and JavaScript toLowerCase() differ.
CASE_TITLES = ["İstanbul", "ΟΔΥΣΣΕΥΣ", "Ⓐlpha", "ꟌAKE", "Ǆemal", "ẞig", "КИРИЛЛ", "Ꞔx", "𐐀sage"]
pages += [{"id": f"case-title-{i}", **page(f"title: {t}")} for i, t in enumerate(CASE_TITLES)]

for i, p in enumerate(pages):
    p.setdefault("id", f"page-{i}")

# --- rule 6: case tables -----------------------------------------------------------------------
CASE_STRINGS = ["ΟΔΥΣΣΕΥΣ", "ΑΣ", "ΑΣ.", "Σ", "AΣ\u0301", "AΣB", "A\u00adΣ", "𐐀Σ", "ΣΑ", "aΣ'", "İ", "İstanbul",
                "ẞ", "Ǆ", "ǅ", "Ⓐ", "ꟌA", "\ua7cb", "\u1c89", "\U00010d50", "\U00016ea0", "Ⅻ", "ＡＢ", "Kelvin \u212a",
                "Å\u212b", "ı", "ſ", "ϴ", "ῼ", "ᾈ", "Ω\u2126", "\ud83d", "a\udc00b", "MiXeD CaSe 123"]
js_lower = CASE_STRINGS + [chr(c) for c in range(0x370, 0x400)] + ["Σ" + chr(c) for c in (0x300, 0x345, 0x2e, 0x27, 0xad)]
sql_lower = [s for s in CASE_STRINGS if not any(0xD800 <= ord(ch) <= 0xDFFF for ch in s)]
ilike = [("Met Ⓐlpha at İstanbul", "ⓐlpha"), ("Met Ⓐlpha", "Ⓐlpha"), ("İstanbul trip", "istanbul"),
         ("İstanbul trip", "i̇stanbul"), ("ΟΔΥΣΣΕΥΣ sailed", "οδυσσευσ"), ("ΟΔΥΣΣΕΥΣ sailed", "οδυσσευς"),
         ("50% off_sale", "50%"), ("50 percent", "50%"), ("a_b", "a_b"), ("axb", "a_b"), ("ꟌAKE", "ꟍake"),
         ("Straße", "STRASSE"), ("STRASSE", "straße"), ("Ǆemal", "ǆemal"), ("back\\slash", "k\\s")]

# --- rule 5 (and 6): candidates ----------------------------------------------------------------
CANDIDATES = [
    "田中𠀀𠀁𠀂さんと話した", "𠀀𠀁 only", "田中さんと𪚥会った", "东京大学の田中", "김철수와 만났다", "ｶﾀｶﾅ半角",
    "々木と〇月", "㐀㐁 ext-A", "豈 compat", "ｱｲｳ and テスト", "ゟゐゑ", "・中点・", "ー長音", "ㄱㄴ compat jamo",
    "Met ꟌAKE today", "Ask Ɤorb about it", "Saw Ᲊalo again", "remind me about ꟍake", "Talk to 𐐀sage",
    "Ping Ǆemal and ǅemal", "ΟΔΥΣΣΕΥΣ arrived", "Did İstanbul reply?", "What about Straße?", "Ⓐlpha Team met",
    "new ꞔorb word", "Garay \U00010d50\U00010d70 name", "\U00016ea0\U00016ebb here", "Bob's and ſ's",
]
NORMALIZE = ["ΟΔΥΣΣΕΥΣ", "  \"Bob\"  ", "ＡＢＣ", "İzmir", "ꟌAKE", "ﬁne", "Ⅻ", "Σ", "ΑΣ", "a\u00a0\u3000b", "\ufeffx\ufeff"]

# --- rule 9: Date.parse -------------------------------------------------------------------------
rng = random.Random(30)
DATES = [
    "2024-01-05T10:00:00Z", "2024-01-05t10:00:00z", "2024-01-05T10:00:00", "2024-01-05", "2024-1-5", "2024-01-05 10:00",
    "2024-02-30T00:00:00Z", "2023-02-29", "2024-13-01", "2024-01-05T24:00:00Z", "2024-01-05T24:00:01Z", "2024-01-05T10:00:60Z",
    "2024-01-05T10:00:00.123456789Z", "2024-01-05T10:00:00+05:30", "2024-01-05T10:00:00+0530", "2024-01-05T10:00:00+05",
    "+002024-01-05T00:00:00Z", "-000000-01-01T00:00:00Z", "+275760-09-13T00:00:00Z", "+275760-09-13T00:00:00.001Z",
    "Fri, 05 Jan 2024 10:00:00 GMT", "Fri, 05 Jan 24 10:00:00 GMT", "Fri, 05 Jan 49 10:00:00 GMT",
    "Fri, 05 Jan 50 10:00:00 GMT", "Fri, 05 Jan 99 10:00:00 +0100", "Fri, 05 Jan 00 10:00 EST", "05 Jan 0 10:00",
    "Tuesday, 09-Nov-99 23:12:40 GMT", "Jan 5 2024", "January 5, 2024 10:00 PM", "5 January 2024", "Jan 5",
    "Feb 29", "01/05/2024", "1/5/24", "2024/01/05", "13/01/2024", "Jan 5 2024 10:00 GMT+0100 (CET)",
    "Fri Jan 05 2024 10:00:00 GMT+0000 (Coordinated Universal Time)", "Jan 5 2024 12:00 am", "Jan 5 2024 13:00 pm",
    "Jan 5 2024 10:00 UT", "Jan 5 2024 10:00 PDT", "Jan 5 2024 10:00 +24", "yesterday", "now", "", " ", "2024",
    "2024Z", "2024 10:00", "T10:00", "10:00", "Jan\xa05\u30002024", "Jan\u202f5 2024", "Jan 5 2024 é", "é Jan 5 2024",
    "12:30 2024-01.-05", "1e3", "0", "-1", "Jan 5 2024 10:00 am pm", "31 Feb 2024", "Dec 32 2024", "2024-01-05T10:00:00ZZ",
]
alphabet = list("0123456789 -:/.,TtZz+()APMapmGMTUTCJanFebx\t\xa0")
for _ in range(600):
    s = rng.choice(DATES[:40])
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(s) + 1)
        op = rng.random()
        if op < 0.4 and i < len(s):
            s = s[:i] + s[i + 1 :]
        elif op < 0.8:
            s = s[:i] + rng.choice(alphabet) + s[i:]
        elif i < len(s):
            s = s[:i] + rng.choice(alphabet) + s[i + 1 :]
    DATES.append(s)
DATES = list(dict.fromkeys(DATES))

# --- rule 10: numbers --------------------------------------------------------------------------
NUMBERS = ["1", "1.0", "1e0", "10e-1", "-0", "-0.0", "1.5", "9007199254740992", "9007199254740993", "9007199254740995",
           "18014398509481985", "1e21", "1e300", "1e400", "123456789012345678901234567890", "0.1e1", "2e-0",
           "4294967295", "1.0000000000000001"]

# --- rules 7 and 8: conversations --------------------------------------------------------------
L = "**You** (2024-01-05 9:00 AM): "
A = "**Assistant** (2024-01-05 9:01 AM): "
CONVERSATIONS = [
    f"{L}hello\n{A}hi there",
    f"{L}line one\n\nline three after a blank\n{A}ok",
    f"{L}crlf one\r\ncrlf two\r\n{A}ok\r\n",
    f"{L}  padded text  \n   indented continuation   \n{A}ok",
    f"{L}before heading\n## 2024-01-06\n{A}after heading",
    f"{L}a\n#### 2024-01-06\n##### 2024-01-06\n# 2024-1-6\n{A}b",
    f"{L}lone\rcarriage\n{A}ok",
    f"{L}x\n\u2028\n{A}ok",
    f"{L}text\n**Bob** (2024-01-05 9:02 AM): injected anchor\n{A}ok",
    f"{L}text\n**Bob** (2024-01-05 13:00 PM): pm13\n{A}ok",
    f"{L}text\n**Bob** (2024-01-05 25:00): hour25\n{A}ok",
    f"{L}text\n**Bob** (2024-02-30 9:00 AM): feb30\n{A}ok",
    f"{L}text\n**Bob** (2024-01-05 9:99 AM): min99\n{A}ok",
    f"{L}text\n**  ✓ Bob** (2024-01-05 9:02 AM): speaker junk\n{A}ok",
    f"{L}\n{A}empty first",
    f"preamble\n{L}one\n**You** (2024-01-05 10:00 AM): gap\n**Assistant** (2024-01-05 10:31 AM): gap2",
    f"{L}" + "x" * 3000 + "\n" + A + "y" * 3500,
    f"{L}" + "😀" * 3300 + "\n" + A + "tail",
    f"{L}" + "a" * 6400 + "\n" + A + "b",
]
# The segment header can be long too: a long speaker name.
CONVERSATIONS.append(f"**{'N' * 200}** (2024-01-05 9:00 AM): " + "é" * 6400 + "\n" + A + "z")

cases = {
    "pages": pages,
    "sql_lower": sql_lower,
    "ilike": ilike,
    "js_lower": js_lower,
    "normalize_alias": NORMALIZE,
    "candidates": CANDIDATES,
    "date_parse": DATES,
    "json_numbers": NUMBERS,
    "conversations": CONVERSATIONS,
}

if __name__ == "__main__":
    OUT.parent.mkdir(parents=True, exist_ok=True)
    # Lone surrogates are written as \\u escapes, which JSON.parse keeps.
    OUT.write_text(json.dumps(cases, ensure_ascii=True, indent=1) + "\n")
    print(f"wrote {OUT}: {len(pages)} pages", file=sys.stderr)
