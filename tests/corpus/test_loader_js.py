"""The loader reads a corpus the way gbrain's JavaScript does: file order and JSON literals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from brainbench.corpus.errors import CorpusError
from brainbench.corpus.loader import load_corpus


def _write(root: Path, name: str, fid: str, text: str = "hi") -> None:
    (root / "fixtures").mkdir(parents=True, exist_ok=True)
    (root / "gold").mkdir(parents=True, exist_ok=True)
    fixture = {"schema_version": 1, "fixture_id": fid, "suites": ["know-to-ask"],
               "turns": [{"turn_id": 1, "role": "user", "text": text}]}
    (root / "fixtures" / f"{name}.fixture.json").write_text(json.dumps(fixture))
    gold = {"fixture_id": fid, "turns": {"1": {"should_retrieve": False}}}
    (root / "gold" / f"{name}.gold.json").write_text(json.dumps(gold))


def test_files_are_taken_in_utf16_order(tmp_path: Path) -> None:
    # U+FF5E sorts before U+1F600 by code point, after it by UTF-16 unit (0xD83D < 0xFF5E).
    _write(tmp_path, "x\uff5e", "wide-tilde")
    _write(tmp_path, "x\U0001f600", "smile")
    corpus = load_corpus(tmp_path / "fixtures", tmp_path / "gold")
    assert [f.fixture_id for f in corpus.fixtures] == ["smile", "wide-tilde"]


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_non_json_number_literals_are_refused(tmp_path: Path, literal: str) -> None:
    _write(tmp_path, "a", "a")
    path = tmp_path / "fixtures" / "a.fixture.json"
    path.write_text(path.read_text().replace('"schema_version": 1', f'"schema_version": {literal}'))
    with pytest.raises(CorpusError, match="invalid JSON"):
        load_corpus(tmp_path / "fixtures", tmp_path / "gold")


def test_a_lone_surrogate_loads_as_the_replacement_character(tmp_path: Path) -> None:
    _write(tmp_path, "a", "a", text="half \ud83d here, whole \U0001f600 there")
    raw = (tmp_path / "fixtures" / "a.fixture.json").read_text()
    assert "\\ud83d here" in raw and "\\ud83d\\ude00 there" in raw  # written as JSON escapes
    [item] = load_corpus(tmp_path / "fixtures", tmp_path / "gold").fixtures
    assert item.fixture.turns[0].text == "half \ufffd here, whole \U0001f600 there"
