"""Conversation history in the files each harness writes for its hooks (harness knowledge).

claude-code: a transcript JSONL at ``transcript_path`` (user/assistant lines and
``hook_additional_context`` attachments).  codex: a rollout JSONL (session_meta,
event_msg user_message, response_item messages).  The runner writes them here as the
harness would; the hook programs read them back (``hooks/transcripts.py``), and
``tests/harnesses/test_transcripts.py`` holds the two sides to one format.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from brainbench.jsjson import stringify
from brainbench.models.history import HistoryItem

ROLLOUT_TS = "2026-01-01T00:00:00.000Z"


def claude_transcript_lines(history: Iterable[HistoryItem]) -> list[str]:
    lines = []
    for item in history:
        if item.role == "context":
            doc: dict[str, object] = {
                "type": "attachment",
                "attachment": {"type": "hook_additional_context", "content": [item.text]},
            }
        else:
            doc = {"type": item.role, "message": {"role": item.role, "content": item.text}}
        # JSON.stringify, as gbrain's adapter writes it: a lone surrogate (a clip
        # that cut a pair) is escaped, not written as invalid UTF-8.
        lines.append(stringify(doc))
    return lines


def codex_rollout_lines(session_id: str, cwd: str, history: Iterable[HistoryItem]) -> list[str]:
    lines = [stringify({"timestamp": ROLLOUT_TS, "type": "session_meta", "payload": {"id": session_id, "cwd": cwd}})]
    for item in history:
        if item.role == "user":
            doc: dict[str, object] = {"type": "event_msg", "payload": {"type": "user_message", "message": item.text}}
        elif item.role == "assistant":
            doc = {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                                          "content": [{"type": "output_text", "text": item.text}]}}
        else:  # hook context reaches the model as a developer message
            doc = {"type": "response_item", "payload": {"type": "message", "role": "developer",
                                                          "content": [{"type": "input_text", "text": item.text}]}}
        lines.append(stringify({"timestamp": ROLLOUT_TS, **doc}))
    return lines


def write_lines(path: Path, lines: Sequence[str]) -> None:
    if not os.path.isdir(path.parent):
        path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    os.replace(tmp, path)
