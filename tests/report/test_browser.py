"""The HTML report in a real browser: opened from file:// in headless Chromium with the network off."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from .conftest import TracedRun

CHROMIUM = os.environ.get("BRAINBENCH_CHROMIUM", "/usr/bin/chromium")
# Chromium in a root container with no GPU, no sandbox and no network: every flag is needed here.
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
REPO = Path(__file__).resolve().parents[2]


def artefact_dir() -> Path:
    """Screenshots for CI to keep (BRAINBENCH_ARTEFACTS, default .ci-artefacts/ in the repo)."""
    path = Path(os.environ.get("BRAINBENCH_ARTEFACTS") or REPO / ".ci-artefacts") / "report"
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="module")
def page(traced_run: TracedRun, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, list[str]]]:
    # Under CI the browser is installed by .ci/run, so a missing one is a failure, not a skip.
    missing = pytest.fail if os.environ.get("CI") else pytest.skip
    try:
        from playwright import sync_api
    except ImportError:
        missing("playwright is missing: install the test extra (bash scripts/bootstrap)")
    if not Path(CHROMIUM).exists():
        missing(f"{CHROMIUM} is missing: run scripts/install-browser (Debian package chromium)")
    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_api.sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile), executable_path=CHROMIUM, headless=True, args=FLAGS, viewport={"width": 1280, "height": 900},
            offline=True)
        requests: list[str] = []
        context.on("request", lambda r: requests.append(r.url))
        # Anything that is not the report itself is refused: the report must need nothing else.
        context.route(lambda url: not url.startswith(("file://", "data:")), lambda route: route.abort())
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda exc: errors.append(str(exc)))
        tab.goto(traced_run.html.joinpath("index.html").as_uri())
        try:
            yield tab, requests
        finally:
            assert not errors, errors
            context.close()
    shutil.rmtree(profile, ignore_errors=True)


def test_two_clicks_from_the_scoreboard_to_the_reason(page: tuple[Any, list[str]]) -> None:
    tab, requests = page
    tab.wait_for_selector("#scoreboard-table")
    # Plots are drawn by the vendored Chart.js, offline.
    assert tab.evaluate("typeof Chart") == "function"
    assert tab.locator("canvas#plot-latency").is_visible()
    # The header says what was graded and the gate verdict (this run had no --compare).
    assert tab.locator("#gate").inner_text() == "Gate: not gated (the run had no --compare BASELINE)"
    assert tab.locator(".graded").inner_text() == "Seams: local processes, no images"
    tab.screenshot(path=str(artefact_dir() / "scoreboard.png"), full_page=True)
    cell = tab.get_by_role("link", name=re.compile(r"^codex\/push: [1-9][0-9]* of [0-9]+ gold items failed$"))
    cell.click()  # click 1: the failing cell
    tab.wait_for_selector("#cell-failing")
    tab.get_by_role("link", name="gen-kta-pos-001#1 missing people/gideon-dunmarrow").click()  # click 2: the item
    tab.wait_for_selector("#verdicts")
    assert tab.locator(".crumbs a").nth(1).inner_text() == "codex/push"  # the way back is the way in
    reason = tab.locator("#verdicts tr.failing td.reason").first
    assert reason.is_visible()
    assert "dropped by the pointer budget (rank 2 of 2, budget 1 pointer" in reason.inner_text()
    # The injected context shows the gold slug that did make it, highlighted.
    assert tab.locator("pre.context mark").first.inner_text() == "companies/lumivex"
    tab.screenshot(path=str(artefact_dir() / "failing-turn.png"), full_page=True)
    assert requests and all(u.startswith("file://") for u in requests), requests


def test_filters_and_keyboard(page: tuple[Any, list[str]]) -> None:
    tab, _ = page
    tab.goto(tab.url.split("#")[0] + "#")
    tab.wait_for_selector("#scoreboard-table")
    tab.select_option("#filter-harness", "openclaw")
    rows = tab.locator("#scoreboard-table tbody tr")
    assert rows.count() == 2 and all("openclaw" in rows.nth(i).inner_text() for i in range(2))
    tab.select_option("#filter-verdict", "suppressed")
    items = tab.locator("#failing-items + ul.items li")
    # craft-suppressed#3 fails both suites of openclaw, for the same reason.
    assert items.count() == 2
    assert all("already injected at turn 1" in items.nth(i).inner_text() for i in range(2))
    tab.select_option("#filter-harness", "")
    tab.select_option("#filter-verdict", "")
    # Keyboard only: Tab reaches the first cell link and Enter follows it.
    tab.locator("body").focus()
    for _ in range(40):
        tab.keyboard.press("Tab")
        if tab.evaluate("document.activeElement.getAttribute('href') || ''").startswith("#cell="):
            break
    else:
        pytest.fail("no cell link reachable with Tab")
    tab.keyboard.press("Enter")
    tab.wait_for_selector("#cell-title")
    assert tab.evaluate("document.activeElement.id") == "cell-title"  # focus follows the view


def test_accessibility_with_axe(page: tuple[Any, list[str]]) -> None:
    """axe-core (vendored into the tests, offline) finds no WCAG 2 A/AA violation: contrast, names, keyboard."""
    tab, _ = page
    axe = (Path(__file__).parent / "vendor" / "axe.min.js").read_text(encoding="utf-8")
    for view in ("#", "#cell=codex/push", "#turn=codex/gen-kta-pos-001/1"):
        tab.goto(tab.url.split("#")[0] + view)
        tab.wait_for_selector("main h2")
        tab.evaluate(axe)  # evaluate runs outside the page's CSP, like a devtools snippet
        found = tab.evaluate("axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}})"
                             ".then(r => r.violations.map(v => v.id + ': ' + v.nodes.length + ' node(s) — '"
                             " + v.nodes[0].failureSummary))")
        assert found == [], f"{view}: {found}"
    # The checker is live: a faint paragraph is caught.
    tab.evaluate("(() => { const p = document.createElement('p'); p.textContent = 'faint text';"
                 " p.setAttribute('style', 'color:#ddd;background:#fff');"
                 " document.querySelector('main').append(p); })()")
    ids = tab.evaluate("axe.run(document, {runOnly: {type: 'tag', values: ['wcag2aa']}})"
                       ".then(r => r.violations.map(v => v.id))")
    assert "color-contrast" in ids
