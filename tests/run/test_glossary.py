"""The metric glossary has one source: the registry; the doc is generated from it."""

from __future__ import annotations

from pathlib import Path

from brainbench.metrics.glossary import METRIC_GLOSSARY, glossary_markdown
from brainbench.report.scoreboard import COLUMNS


def test_doc_is_in_sync_with_the_registry() -> None:
    doc = Path(__file__).resolve().parents[2] / "docs" / "METRIC_GLOSSARY.md"
    assert doc.read_text() == glossary_markdown(), "regenerate docs/METRIC_GLOSSARY.md from the registry"


def test_every_scoreboard_metric_is_explained() -> None:
    assert set(COLUMNS) == set(METRIC_GLOSSARY)
    assert "thesis failure mode" in METRIC_GLOSSARY["know_to_ask_failure_rate"]
