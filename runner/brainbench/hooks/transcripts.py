"""Conversation history as a hook reads it from its harness's files.

claude-code: a transcript JSONL at ``transcript_path`` (user/assistant lines and
``hook_additional_context`` attachments).  codex: a rollout JSONL (session_meta,
event_msg user_message, response_item messages).  The runner writes them as the
harness would (``harnesses/transcripts.py``); ``tests/harnesses/test_transcripts.py``
holds the two sides to one format.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Sequence
from pathlib import Path

from brainbench.jsstring import trim
from brainbench.models.history import HistoryItem

TAIL_BYTES = 2 * 1024 * 1024
MAX_TRANSCRIPT_BYTES = 50 * 1024 * 1024


def read_confined(path_text: str | None, root: Path | None) -> list[dict[str, object]] | None:
    """Parsed JSONL lines, or None when the path is not an acceptable transcript.

    Like gbrain's hook: a ``.jsonl`` regular file (no symlink), at most 50 MiB,
    inside ``root`` when one is configured; only the newest 2 MiB are read.
    """
    if not path_text:
        return []
    path = Path(path_text)
    if path.suffix != ".jsonl":
        return None
    try:
        info = path.lstat()
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode) or info.st_size > MAX_TRANSCRIPT_BYTES:
        return None
    if root is not None:
        try:
            path.resolve().relative_to(root.resolve())
        except ValueError:
            return None
    with path.open("rb") as fh:
        if info.st_size > TAIL_BYTES:
            fh.seek(info.st_size - TAIL_BYTES)
            fh.readline()  # drop the partial first line
        data = fh.read()
    out = []
    # Split on "\n" only, as gbrain does: JSON.stringify leaves U+2028, U+2029 and
    # U+0085 raw inside strings, and str.splitlines() would cut a line at each.
    for raw in data.decode("utf-8", errors="replace").split("\n"):
        line = trim(raw)
        if not line:
            continue
        try:
            doc = json.loads(line)
        except json.JSONDecodeError:
            continue  # a transcript being written may end mid-line
        if isinstance(doc, dict):
            out.append(doc)
    return out


def _content_text(content: object, strip: bool = True) -> str:
    if isinstance(content, str):
        return trim(content) if strip else content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict) and isinstance(block.get("text"), str):
                parts.append(block["text"])
        joined = "\n".join(parts)
        return trim(joined) if strip else joined
    return ""


def parse_claude_transcript(docs: Sequence[dict[str, object]]) -> tuple[list[HistoryItem], list[str]]:
    """(turns, injected context blocks) from Claude Code transcript lines."""
    turns: list[HistoryItem] = []
    blocks: list[str] = []
    for doc in docs:
        kind = doc.get("type")
        if kind in ("user", "assistant") and not doc.get("isSidechain"):
            message = doc.get("message")
            if isinstance(message, dict):
                text = _content_text(message.get("content"))
                if text:
                    turns.append(HistoryItem(str(kind), text))
        elif kind == "attachment":
            att = doc.get("attachment")
            if isinstance(att, dict) and att.get("type") == "hook_additional_context":
                content = att.get("content")
                joined = "\n".join(c for c in content if isinstance(c, str)) if isinstance(content, list) else content
                if isinstance(joined, str) and trim(joined):
                    blocks.append(trim(joined))
    return turns, blocks


def parse_codex_rollout(docs: Sequence[dict[str, object]]) -> list[HistoryItem]:
    items: list[HistoryItem] = []
    for doc in docs:
        payload = doc.get("payload")
        if not isinstance(payload, dict):
            continue
        if doc.get("type") == "event_msg" and payload.get("type") == "user_message":
            text = payload.get("message")
            if isinstance(text, str) and trim(text):
                items.append(HistoryItem("user", text))
        elif doc.get("type") == "response_item" and payload.get("type") == "message":
            role = payload.get("role")
            # Raw text: the prior context is the turns as spoken, not as trimmed.
            text = _content_text(payload.get("content"), strip=False)
            if role == "assistant" and text:
                items.append(HistoryItem("assistant", text))
            elif role == "developer" and text:
                items.append(HistoryItem("context", text))
    return items
