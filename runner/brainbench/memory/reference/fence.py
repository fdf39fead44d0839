"""The facts fence of an owner page: a markdown table whose rows the owner sync turns into facts.

    ## Facts

    <!--- gbrain:facts:begin -->
    | # | claim | kind | confidence | visibility | notability | valid_from | valid_until | source | context |
    |---|-------|------|------------|------------|------------|------------|-------------|--------|---------|
    | 1 | Ada founded Acme | fact | 1.0 | world | medium | 2026-01-01 |  | owner |  |
    <!--- gbrain:facts:end -->

Also the claim fingerprint a purge and its tombstone match on: the claim with case,
whitespace and trailing punctuation folded, hashed, so the tombstone holds no text.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

BEGIN = "<!--- gbrain:facts:begin -->"
END = "<!--- gbrain:facts:end -->"
_COLUMNS = ("n", "claim", "kind", "confidence", "visibility", "notability", "valid_from", "valid_until", "source",
            "context")
_SEPARATOR = re.compile(r"^\|?\s*:?-{2,}")
_SPLIT = re.compile(r"(?<!\\)\|")


@dataclass(frozen=True)
class FenceRow:
    row_num: int
    claim: str
    kind: str
    confidence: float
    visibility: str
    valid_from: str | None
    context: str | None
    line: str  # the row's line as written


def fingerprint(claim: str) -> str:
    folded = unicodedata.normalize("NFKC", claim).lower()
    folded = re.sub(r"\s+", " ", folded).strip().rstrip(".!?;: ")
    return hashlib.sha256(folded.encode("utf-8")).hexdigest()


def _cells(line: str) -> list[str] | None:
    text = line.strip()
    if not text.startswith("|") or _SEPARATOR.match(text):
        return None
    parts = [p.strip().replace("\\|", "|") for p in _SPLIT.split(text.strip("|"))]
    return parts if len(parts) >= 2 else None


def fence_rows(text: str) -> list[FenceRow]:
    """Every row of every facts fence in ``text``."""
    rows: list[FenceRow] = []
    inside = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped == BEGIN:
            inside = True
            continue
        if stripped == END:
            inside = False
            continue
        cells = _cells(line) if inside else None
        if cells is None or cells[0] in ("#", "n"):
            continue
        values = dict(zip(_COLUMNS, cells + [""] * (len(_COLUMNS) - len(cells)), strict=False))
        if not values["claim"] or not values["n"].isdigit():
            continue
        try:
            confidence = float(values["confidence"] or 1.0)
        except ValueError:
            confidence = 1.0
        rows.append(FenceRow(int(values["n"]), values["claim"], values["kind"] or "fact", confidence,
                             values["visibility"] or "private", values["valid_from"] or None,
                             values["context"] or None, line))
    return rows


def without_rows(text: str, drop: Callable[[FenceRow], bool]) -> tuple[str, int]:
    """``text`` with the fence rows ``drop`` selects removed; returns (text, rows removed)."""
    dropped = {r.line for r in fence_rows(text) if drop(r)}
    if not dropped:
        return text, 0
    kept, removed, inside = [], 0, False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped in (BEGIN, END):
            inside = stripped == BEGIN
        elif inside and line in dropped:
            removed += 1
            continue
        kept.append(line)
    return "\n".join(kept), removed


def strip_fences(text: str) -> str:
    """``text`` without its fence table rows (the write gate scans those when they are projected)."""
    return without_rows(text, lambda _: True)[0]
