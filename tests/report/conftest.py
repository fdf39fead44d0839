"""One real traced run for the report tests: known budget overflows plus crafted failures."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# From the committed corpus: openclaw's 3 pointers and codex's 1 fragment overflow on these turns
# (with gbrain 0.46's behaviour: 0.60's openclaw volunteers the page its budget drops).
KNOWN = ("gen-push-013", "gen-kta-pos-001")
PAGE = "---\ntitle: {title}\ntype: person\nsummary: {summary}\n---\n\n{summary}\n"


def _fixture(fid: str, pages: dict[str, tuple[str, str]], turns: list[str]) -> dict[str, object]:
    return {
        "schema_version": 1, "fixture_id": fid, "suites": ["know-to-ask", "push"],
        "seed_pages": [{"slug": s, "content": PAGE.format(title=t, summary=m)} for s, (t, m) in pages.items()],
        "turns": [{"turn_id": i + 1, "role": "user" if i % 2 == 0 else "assistant", "text": text}
                  for i, text in enumerate(turns)],
    }


# Turn 3 names Romilly again: every seam already injected her page at turn 1, so it is suppressed.
SUPPRESSION = _fixture("craft-suppressed", {"people/romilly-ashenholt": ("Romilly Ashenholt", "Founder of Xylocore.")},
                       ["What is new with Romilly Ashenholt?", "Let me check the brain.",
                        "And what did Romilly Ashenholt decide about the raise?"])
SUPPRESSION_GOLD = {"fixture_id": "craft-suppressed", "turns": {
    "1": {"should_retrieve": True, "gold_slugs": ["people/romilly-ashenholt"]},
    "3": {"should_retrieve": True, "gold_slugs": ["people/romilly-ashenholt"]}}}
# The harbour master is never named: no alias, title, slug or surname in the turn resolves the page.
UNRESOLVABLE = _fixture("craft-unresolvable",
                        {"people/amadeus-quillfeather": ("Amadeus Quillfeather", "Harbour master of Port Elling.")},
                        ["What did the harbour master say about the ferry schedule?"])
UNRESOLVABLE_GOLD = {"fixture_id": "craft-unresolvable", "turns": {
    "1": {"should_retrieve": True, "gold_slugs": ["people/amadeus-quillfeather"]}}}


@dataclass(frozen=True)
class TracedRun:
    root: Path
    out: Path
    html: Path
    proc: subprocess.CompletedProcess[str]


def bench(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    # A wide terminal, so rich does not wrap a reason across table lines.
    env = {**{k: v for k, v in os.environ.items() if k != "CI"}, "COLUMNS": "240"}
    return subprocess.run([sys.executable, "-m", "brainbench.cli", *map(str, args)], capture_output=True, text=True,
                          timeout=600, check=False, env=env, cwd=cwd)


@pytest.fixture(scope="session")
def traced_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TracedRun]:
    root = tmp_path_factory.mktemp("traced")
    fx, gd = root / "fixtures", root / "gold"
    fx.mkdir()
    gd.mkdir()
    for fid in KNOWN:
        shutil.copy(REPO / "fixtures" / f"{fid}.fixture.json", fx)
        shutil.copy(REPO / "gold" / f"{fid}.gold.json", gd)
    for doc, gold in ((SUPPRESSION, SUPPRESSION_GOLD), (UNRESOLVABLE, UNRESOLVABLE_GOLD)):
        (fx / f"{doc['fixture_id']}.fixture.json").write_text(json.dumps(doc))
        (gd / f"{gold['fixture_id']}.gold.json").write_text(json.dumps(gold))
    out, html = root / "out" / "result.json", root / "html"
    proc = bench("run", "--fixtures", fx, "--gold", gd, "--suite", "know-to-ask,push", "--out", out,
                 "--html", html, "--keep", "--jobs", "1", "--quiet", "--format", "markdown", "--behaviour", "0.46",
                 cwd=root)
    kept = json.loads(out.read_text())["_meta"]["trace"]["work_root"] if out.exists() else None
    try:
        assert proc.returncode == 0, proc.stderr
        yield TracedRun(root, out, html, proc)
    finally:
        if kept:  # --keep left the work root in scratch space; it is ours to remove
            shutil.rmtree(kept, ignore_errors=True)
