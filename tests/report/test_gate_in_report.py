"""The HTML report says the gate verdict the run reached, as the scoreboard does."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import REPO, bench

COMMON = ("run", "--harness", "codex", "--suite", "push", "--quiet", "--format", "markdown")


def _header(html: Path) -> str:
    return (html / "index.html").read_text().split("<header>", 1)[1].split("</header>", 1)[0]


def test_pass_and_regression_reach_the_report(tmp_path: Path) -> None:
    base = tmp_path / "base.json"
    first = bench(*COMMON, "--update-baseline-to", base, "--html", tmp_path / "ungated", cwd=REPO)
    assert first.returncode == 0, first.stderr
    assert '<p id="gate" class="gate-none">Gate: not gated' in _header(tmp_path / "ungated")
    # (the committed-baseline check reads the same file: this is not the checkout's full-corpus gate)
    passed = bench(*COMMON, "--compare", base, "--committed-baseline", base, "--html", tmp_path / "pass", cwd=REPO)
    assert passed.returncode == 0, passed.stderr
    assert '<p id="gate" class="gate-pass">Gate: PASS (same-hash)</p>' in _header(tmp_path / "pass")
    # A main whose codex/push failed one item fewer: this run loses an item against it.
    doc = json.loads(base.read_text())
    failed = doc["counts"]["codex/push"]["gold_failed"]
    assert failed > 0  # codex's 1-fragment budget drops gold pages on this corpus
    doc["counts"]["codex/push"]["gold_failed"] = failed - 1
    better = tmp_path / "better.json"
    better.write_text(json.dumps(doc))
    worse = bench(*COMMON, "--compare", better, "--committed-baseline", better, "--html", tmp_path / "worse",
                  cwd=REPO)
    assert worse.returncode == 1, worse.stderr
    header = _header(tmp_path / "worse")
    assert '<p id="gate" class="gate-regression">Gate: REGRESSION (same-hash)' in header
    assert f"codex/push gold_failed {failed - 1} → {failed}" in header
    assert "## Gate: REGRESSION" in worse.stdout  # the scoreboard says the same
