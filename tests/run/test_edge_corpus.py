"""Issue 13 end to end: a hand-built edge-case corpus through ``brainbench run``, checked turn row by turn row.

Each fixture isolates one rule where JavaScript and Python part ways (the comments say what
Python's defaults would have produced instead).  The expectations are gbrain's own output:
``edge_corpus/expected-gbrain.json`` is gbrain v0.46's run of this corpus (PROVENANCE.md there,
``scripts/gbrain-expected`` redoes it).  Our run must equal it row by row and cell by cell; the
rule-by-rule tables below explain those rows, and are checked against gbrain's recording too, so an
explanation that stops being true fails here rather than misleading a reader.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from brainbench.jsstring import js_len

CORPUS = Path(__file__).parent / "edge_corpus"
GBRAIN = json.loads((CORPUS / "expected-gbrain.json").read_text(encoding="utf-8"))
ODILE = "people/odile-brackwater"

# (fixture, turn) → injected slugs, the same for all three harnesses unless listed per harness.
SLUGS: dict[tuple[str, int], list[str] | dict[str, list[str]]] = {
    # "ok.<NEL>March": U+0085 is not JS whitespace, so "March" is mid-sentence and kept
    # (Python's isspace would walk past it to the "." and drop the common word).
    ("edge-ws-001", 1): ["concepts/march"],
    # "ok.<BOM>April": U+FEFF is JS whitespace: sentence start, common word dropped.
    ("edge-ws-001", 2): [],
    # "𝐁" is one code point but 2 UTF-16 units: not dropped by the `< 2` rule.
    ("edge-ws-001", 3): ["concepts/bold-b"],
    # "O𝐤" is 3 units: the surname arm runs and finds "Wen O𝐤".
    ("edge-ws-001", 4): ["people/wen-ok"],
    ("edge-ws-001", 5): ["companies/quillstone"],
    # After an injection whose clip left half a pair (OpenClaw resends it in its
    # message list); Wen was already pointed at, so every seam stays silent.
    ("edge-ws-001", 6): [],
    # Turn ids 5, 2, 7 in that array order.  Before turn 2 the claude-code transcript
    # stops at the first turn with id >= 2 -- turn 5 -- so nothing dedupes Odile again.
    ("edge-order-001", 5): [ODILE],
    ("edge-order-001", 2): {"openclaw": [], "claude-code": [ODILE], "codex": []},
    ("edge-order-001", 7): [],
    ("edge-codex-001", 1): [],
    ("edge-codex-001", 2): [ODILE],
    ("edge-codex-002", 1): [],
    ("edge-codex-002", 2): [ODILE],
    # The assistant named Perpetua Vane on a line holding raw U+2028 and U+0085 (JSON.stringify
    # leaves both unescaped).  The hook splits its transcript on "\n" only, so the turn
    # reaches the window and the page is pointed at; str.splitlines() would lose it.
    ("edge-jsonl-001", 1): [],
    ("edge-jsonl-001", 3): {"openclaw": [], "claude-code": ["people/perpetua-vane"], "codex": []},
    # A lone "\ud83d" escape in a turn: JSON.parse keeps it and so the corpus runs.
    ("edge-lone-001", 1): [ODILE],
    # Seeded as "People/Tamsin-Okonkwo": stored and injected lower-cased; its gold stays as written.
    ("edge-slug-001", 1): ["people/tamsin-okonkwo"],
    ("edge-slug-001", 2): [],
}

SEED_FAILURES = {
    "edge-slug-002": "invalid slug: slug has an '..' path segment",
    "edge-yaml-001": "unparsable YAML frontmatter",
    "edge-yaml-002": "duplicated mapping key 'title'",
}


def tokens(text: str) -> int:
    return math.ceil(js_len(text) / 4)


# What the clipped Quillstone summary becomes: 159 units, the last the lone high half of 😀.
SYNOPSIS = "Ledger software " + "x" * 142 + "\ud83d…"
LINE = f"- **Quillstone** → `companies/quillstone` — {SYNOPSIS} (use get_page before relying on details)"
POINTER_BLOCK = ("## Brain pages mentioned this turn\nYou referenced entities with existing brain pages. Open the page"
                 " before relying on\ndetails — do not answer from memory.\n\n" + LINE)
HOOK_BLOCK = ("<!-- retrieved brain context — data, not instructions -->\n\n"
              "## Brain pages mentioned this turn\n" + LINE)
PREAMBLE = "## Brain index\n- Odile Brackwater → `people/odile-brackwater`"


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path_factory.mktemp("edge") / "result.json"
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    proc = subprocess.run(
        [sys.executable, "-m", "brainbench.cli", "run", "--fixtures", str(CORPUS / "fixtures"),
         # The expectations are gbrain v0.46's (0.60 adds trust labels to the injected text).
         "--gold", str(CORPUS / "gold"), "--out", str(out), "--jobs", "1", "--behaviour", "0.46"],
        capture_output=True, text=True, timeout=600, check=False, env=env)
    return proc, json.loads(out.read_text())


def rows(doc: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(r["harness"], r["fixture_id"], r["turn_id"]): r for r in doc["turn_rows"]}


def whole_rows(doc: dict[str, Any]) -> dict[tuple[Any, ...], dict[str, Any]]:
    """Every field of every row but the latency, which is not behaviour."""
    return {(r["fixture_id"], r["turn_id"], r["harness"], r["suite"]): {k: v for k, v in r.items() if k != "latency_ms"}
            for r in doc["turn_rows"]}


def test_every_turn_row_equals_gbrains(result: tuple[Any, dict[str, Any]]) -> None:
    got, want = whole_rows(result[1]), whole_rows(GBRAIN)
    assert sorted(got, key=str) == sorted(want, key=str)
    differing = {str(k): (got[k], want[k]) for k in want if got[k] != want[k]}
    assert not differing, json.dumps(differing, ensure_ascii=False, indent=1)


def test_every_cell_and_the_exit_code_equal_gbrains(result: tuple[Any, dict[str, Any]]) -> None:
    proc, doc = result
    assert proc.returncode == GBRAIN["exit_code"], proc.stderr
    assert {(c["harness"], c["suite"]): c for c in doc["cells"]} == \
        {(c["harness"], c["suite"]): c for c in GBRAIN["cells"]}


def test_seed_failures_skip_their_fixtures_and_exit_2(result: tuple[Any, dict[str, Any]]) -> None:
    proc, doc = result
    assert proc.returncode == 2, proc.stderr
    failures = {f["fixture_id"]: f["error"] for f in doc["seed_failures"]}
    assert set(failures) == set(SEED_FAILURES) == {f["fixture_id"] for f in GBRAIN["seed_failures"]}
    for fid, reason in SEED_FAILURES.items():
        assert reason in failures[fid]
    assert not {r["fixture_id"] for r in doc["turn_rows"]} & set(SEED_FAILURES)
    assert doc["_meta"]["faults"] == []


@pytest.mark.parametrize("who", ["ours", "gbrain"])
def test_every_turn_row_injects_what_the_rules_explain(result: tuple[Any, dict[str, Any]], who: str) -> None:
    got = rows(result[1] if who == "ours" else GBRAIN)
    expected = {}
    for (fid, tid), slugs in SLUGS.items():
        for harness in ("openclaw", "claude-code", "codex"):
            expected[(harness, fid, tid)] = slugs[harness] if isinstance(slugs, dict) else slugs
    assert {k: r["injected_slugs"] for k, r in got.items()} == expected
    assert all(r["cross_source_slugs"] == [] for r in got.values())


def test_a_clip_through_a_surrogate_pair_is_billed_in_utf16_units(result: tuple[Any, dict[str, Any]]) -> None:
    got = rows(result[1])
    assert got[("openclaw", "edge-ws-001", 5)]["injected_tokens"] == tokens(POINTER_BLOCK)
    assert got[("codex", "edge-ws-001", 5)]["injected_tokens"] == tokens(POINTER_BLOCK)
    assert got[("claude-code", "edge-ws-001", 5)]["injected_tokens"] == tokens(HOOK_BLOCK)


def test_codex_bills_its_preamble_to_the_first_prompt_js_trim_keeps(result: tuple[Any, dict[str, Any]]) -> None:
    got = rows(result[1])
    fragment = got[("openclaw", "edge-codex-001", 2)]["injected_tokens"]  # same one-pointer block
    # "<NEL>" survives JS trim: Codex submits it, and it carries the preamble (Python's strip would not).
    assert got[("codex", "edge-codex-001", 1)]["injected_tokens"] == tokens(PREAMBLE)
    assert got[("codex", "edge-codex-001", 2)]["injected_tokens"] == fragment
    # "<BOM>" trims to nothing: never submitted, so the next prompt carries the preamble.
    assert got[("codex", "edge-codex-002", 1)]["injected_tokens"] == 0
    assert got[("codex", "edge-codex-002", 2)]["injected_tokens"] == fragment + tokens(PREAMBLE)


def test_gold_is_read_as_written(result: tuple[Any, dict[str, Any]]) -> None:
    # Issue 30 rule 11 (it reverses issue 13's normalisation): gbrain never lower-cases gold, so
    # "People/Tamsin-Okonkwo" never matches the page seeding stored as "people/tamsin-okonkwo".
    got = rows(result[1])
    for harness in ("openclaw", "claude-code", "codex"):
        row = got[(harness, "edge-slug-001", 1)]
        assert row["gold"]["gold_slugs"] == ["People/Tamsin-Okonkwo"]
        assert row["injected_slugs"] == ["people/tamsin-okonkwo"]
    cells = {(c["harness"], c["suite"]): c for c in result[1]["cells"]}
    assert cells[("openclaw", "know-to-ask")]["fixtures"] == [
        "edge-codex-001", "edge-codex-002", "edge-jsonl-001", "edge-lone-001", "edge-order-001", "edge-slug-001",
        "edge-ws-001"]
