"""The transcript files the runner writes (harnesses/) are what the hook programs read back (hooks/).

The format lives on two sides of the wire, so this holds them to one: every history a
conversation can build survives a write and a read, including text JSON leaves raw
(U+2028, U+0085), and the codex rollout keeps assistant text unstripped.
"""

from __future__ import annotations

from pathlib import Path

from brainbench.harnesses.transcripts import claude_transcript_lines, codex_rollout_lines, write_lines
from brainbench.hooks.transcripts import parse_claude_transcript, parse_codex_rollout, read_confined
from brainbench.models.history import HistoryItem

HISTORY = [
    HistoryItem("user", "What did Alice Example say\u2028about the launch?"),
    HistoryItem("context", "## Brain pages\n- **Alice Example** → `people/alice-example`"),
    HistoryItem("assistant", "  She said it slips a week.\u0085  "),
    HistoryItem("user", "And Bob?"),
]


def test_claude_transcript_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "projects" / "s.jsonl"
    write_lines(path, claude_transcript_lines(HISTORY))
    docs = read_confined(str(path), tmp_path)
    assert docs is not None
    turns, blocks = parse_claude_transcript(docs)
    # The claude reader trims turn text and keeps injections apart, as gbrain's hook does.
    assert turns == [HistoryItem(h.role, h.text.strip(" ")) for h in HISTORY if h.role != "context"]
    assert blocks == [HISTORY[1].text]


def test_codex_rollout_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "sessions" / "s.jsonl"
    write_lines(path, codex_rollout_lines("s", str(tmp_path), HISTORY))
    docs = read_confined(str(path), None)
    assert docs is not None and docs[0]["type"] == "session_meta"
    assert parse_codex_rollout(docs) == HISTORY
