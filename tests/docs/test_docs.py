"""The docs tell the truth: their paths and links exist, their commands and flags are the CLI's, and the
numbers a benchmark writes live only in its generated block.  Each check is also shown to fail, on a small
doc written for the purpose, so a check that stopped looking would be noticed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from . import docs_check

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def tree() -> docs_check.CliTree:
    return docs_check.cli_tree(sys.executable)


def _repo_docs() -> list[Path]:
    return docs_check.doc_files(REPO)


def test_every_path_and_link_in_the_docs_exists() -> None:
    assert docs_check.path_problems(REPO, _repo_docs()) == []


def test_every_command_and_flag_in_the_docs_is_the_clis(tree: docs_check.CliTree) -> None:
    assert docs_check.command_problems(REPO, _repo_docs(), tree) == []


def test_benchmark_numbers_live_only_in_their_generated_blocks() -> None:
    assert docs_check.number_problems(REPO, _repo_docs()) == []


def test_the_scoreboard_footer_names_a_doc_that_exists() -> None:
    from brainbench.report.scoreboard import SEAM_NOTE

    assert "docs/SCOREBOARD.md" in SEAM_NOTE and (REPO / "docs" / "SCOREBOARD.md").is_file()


# --- each check bites -------------------------------------------------------------------------------------

def _project(tmp_path: Path, text: str) -> tuple[Path, list[Path]]:
    (tmp_path / "docs").mkdir()
    (tmp_path / "runner" / "brainbench" / "executors").mkdir(parents=True)
    (tmp_path / "runner" / "brainbench" / "executors" / "base.py").write_text("")
    (tmp_path / "docs" / "OTHER.md").write_text("# Other\n\n## A section\n")
    (tmp_path / "README.md").write_text("# Readme\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_x.py").write_text("def test_present() -> None:\n    pass\n")
    doc = tmp_path / "docs" / "NEW.md"
    doc.write_text(text)
    return tmp_path, docs_check.doc_files(tmp_path)


def test_a_dead_path_or_link_fails(tmp_path: Path) -> None:
    root, docs = _project(tmp_path, "\n".join([
        "Good: `runner/brainbench/executors/base.py`, `executors/base.py`, `base.py`, [x](OTHER.md#a-section).",
        "Dead: `runner/brainbench/executors/gone.py` and `tests/hooks/test_moved.py`.",
        "Dead link [y](MISSING.md), dead anchor [z](OTHER.md#no-such-section).",
        "A test that is gone: `test_renamed_long_ago`; one that is there: `test_present`.",
        "Not paths: `PROJECT/baselines/main.json`, `out/result.json`, `harness_images/<seam>/Dockerfile`.",
        "Not a link: `[Issue #n](…)` in code.",
    ]))
    problems = docs_check.path_problems(root, docs)
    assert [p.split(": ", 1)[1] for p in problems] == [
        "no such path in the repository: runner/brainbench/executors/gone.py",
        "no such path in the repository: tests/hooks/test_moved.py",
        "link to a missing file: MISSING.md",
        "link to a missing heading: OTHER.md#no-such-section",
        "no such test in tests/: test_renamed_long_ago",
    ]
    assert all(p.startswith("docs/NEW.md:") for p in problems)


def test_an_unknown_command_or_flag_fails(tmp_path: Path, tree: docs_check.CliTree) -> None:
    root, docs = _project(tmp_path, "\n".join([
        "Good: `brainbench run --suite push --jobs 1`, `.venv/bin/brainbench corpus generate --seed 7`,",
        "`--include-holdout`, `brainbench cleanup --all`.",
        "```bash",
        "brainbench run --no-such-flag   # a comment: its words are read too",
        "brainbench corpus regenerate",
        "```",
        "Alone: `--made-up-option`.",
        "Wrong command: `brainbench validate --jobs 2`.",
    ]))
    problems = [p.split(": ", 1)[1] for p in docs_check.command_problems(root, docs, tree)]
    assert problems == [
        "`brainbench run` has no option --no-such-flag",
        "`brainbench corpus regenerate`: no such command",
        "no command takes --made-up-option",
        "`brainbench validate` has no option --jobs",
    ]


def test_a_hand_typed_benchmark_number_fails(tmp_path: Path) -> None:
    root, docs = _project(tmp_path, "\n".join([
        "<!-- BEGIN GENERATED demo: benchmarks/update_docs.py writes this, do not edit -->",
        "| full gate run | **4.5 s** wall, p50 2.7 ms, peak RSS 64 MB; 3× corpus |",
        "<!-- END GENERATED demo -->",
        "",
        "A run takes 4.5 s here, and a hook 2.7 ms.",  # copies of the block
        "Elsewhere the wall per call fell to 0.40× (p50 9 ms).",  # measurements with no block at all
        "A 3× corpus, hooks retried 3 times, a 30 s statement timeout, peak memory within 1.5×.",  # not measured
    ]))
    problems = [p.split(": ", 1)[1] for p in docs_check.number_problems(root, docs)]
    assert [p.split(" typed by hand")[0] for p in problems] == ["2.7 ms, 4.5 s", "a measurement"]
    assert "('0.40×')" in problems[1]
    history = root / "docs" / "CHANGELOG.md"
    history.write_text("## 2026-12-01\n- the peak was 1.62× at 10×, p50 9 ms\n")
    assert not [p for p in docs_check.number_problems(root, [*docs, history]) if p.startswith("docs/CHANGELOG.md")]


def test_the_scoreboard_shown_in_scoreboard_md_is_the_committed_baselines() -> None:
    """docs/SCOREBOARD.md reads a real scoreboard: each row it shows has the committed baseline's counts, and the
    cells it says fail are exactly those that do (a new baseline makes this fail until the page is re-read)."""
    import json
    import re

    baseline = json.loads((REPO / "baselines" / "main.json").read_text())
    text = (REPO / "docs" / "SCOREBOARD.md").read_text()
    rows = re.findall(r"^\| ([a-z-]+) \| (?:production|contract) \| ([a-z-]+) \| (\d+)/(\d+) \|(.*)\|$", text, re.M)
    assert len(rows) >= 8
    for harness, suite, failed, total, rest in rows:
        key = f"{harness}/{suite}"
        counts = baseline["counts"][key]
        assert (int(failed), int(total)) == (counts["gold_failed"], counts["gold_total"]), key
        last = rest.rsplit("|", 1)[-1].strip()  # the rows that show it end with avg_injected_tokens
        if re.fullmatch(r"\d+(\.\d+)?", last):
            assert float(last) == baseline["cells"][key]["avg_injected_tokens"], key
    failing = sorted(key for key, c in baseline["counts"].items() if c["gold_failed"])
    # docs/SCOREBOARD.md ("Why our committed baseline fails") and the README's quick start name this one cell.
    assert failing == ["codex/push"], failing
    assert baseline["cells"]["codex/push"]["push_recall"] == 0.5521  # the value SCOREBOARD.md explains
