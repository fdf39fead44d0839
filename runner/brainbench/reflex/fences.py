"""The two gbrain fences a synopsis never shows (retrieval-reflex.ts ``safeSynopsis``).

``<!--- gbrain:takes:begin -->`` … ``<!--- gbrain:takes:end -->`` is cut out whole
(takes-fence.ts ``stripTakesFence``).  ``<!--- gbrain:facts:begin -->`` … ``:end -->`` is
replaced by the table of its *world* rows re-rendered (facts-fence.ts ``stripFactsFence``
with ``keepVisibility: ['world']``): the fence markers stay, private rows and malformed
rows go, and the table header -- 10 columns, or 14 when a kept row has a typed claim --
is the first line a synopsis can reach.  Only the first fence of each kind, and only
when its end marker follows its begin marker; nothing else (no code fences) is stripped.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_DOWN, ROUND_HALF_UP, Decimal

from brainbench.jscase import js_lower
from brainbench.jsjson import js_number, js_parse_float, js_parse_int
from brainbench.jsstring import WS, trim

TAKES_BEGIN, TAKES_END = "<!--- gbrain:takes:begin -->", "<!--- gbrain:takes:end -->"
FACTS_BEGIN, FACTS_END = "<!--- gbrain:facts:begin -->", "<!--- gbrain:facts:end -->"
_KINDS = frozenset({"event", "preference", "commitment", "belief", "fact"})
_VISIBILITIES = frozenset({"private", "world"})
_NOTABILITIES = frozenset({"high", "medium", "low"})
_SEPARATOR_CELL = re.compile(rf"(?:[-:]|{WS})+\Z")
_STRUCK = re.compile(r"~~([^\n\r\u2028\u2029]+?)~~\Z")
_HEADER = "| # | claim | kind | confidence | visibility | notability | valid_from | valid_until | source | context |"
_SEPARATOR = "|---|-------|------|------------|------------|------------|------------|-------------|--------|---------|"
_TYPED_HEADER = _HEADER + " claim_metric | claim_value | claim_unit | claim_period |"
_TYPED_SEPARATOR = _SEPARATOR + "--------------|-------------|------------|--------------|"


def strip_takes(body: str) -> str:
    begin = body.find(TAKES_BEGIN)
    end = body.find(TAKES_END, begin + len(TAKES_BEGIN)) if begin != -1 else -1
    return body if end == -1 else body[:begin] + body[end + len(TAKES_END) :]


@dataclass(frozen=True)
class _Fact:
    row: int | float
    claim: str
    struck: bool
    kind: str
    confidence: float
    visibility: str
    notability: str
    cells: tuple[str | None, ...]  # valid_from, valid_until, source, context
    metric: str | None
    value: float | None
    unit: str | None
    period: str | None

    @property
    def typed(self) -> bool:
        return any(v is not None for v in (self.metric, self.value, self.unit, self.period))


def _cells(line: str) -> list[str] | None:
    text = trim(line)
    if not text.startswith("|") or "|" not in text[1:]:
        return None
    inner = text[1:]
    inner = inner[:-1] if inner.endswith("|") else inner
    cells, cell, i = [], "", 0
    while i < len(inner):
        if inner[i] == "\\" and inner[i + 1 : i + 2] == "|":
            cell += "|"
            i += 2
            continue
        if inner[i] == "|":
            cells.append(trim(cell))
            cell = ""
        else:
            cell += inner[i]
        i += 1
    cells.append(trim(cell))
    return cells


def _text(raw: str) -> str | None:
    return trim(raw) or None


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _parse_row(cells: list[str], seen: set[float]) -> _Fact | None:
    if len(cells) < 9:
        return None
    cells = cells + [""] * (14 - len(cells))
    row = js_parse_int(cells[0])
    if not math.isfinite(row) or row <= 0 or row in seen:
        return None
    seen.add(row)
    kind, visibility, notability = (js_lower(trim(cells[i])) for i in (2, 4, 5))
    confidence = _finite(js_parse_float(cells[3])) if trim(cells[3]) else None
    if kind not in _KINDS or visibility not in _VISIBILITIES or notability not in _NOTABILITIES or confidence is None:
        return None
    struck = _STRUCK.match(cells[1])
    claim = trim(struck.group(1)) if struck else cells[1]
    value = _finite(js_parse_float(trim(cells[11]).replace(",", ""))) if trim(cells[11]) else None
    return _Fact(row, claim, struck is not None, kind, confidence, visibility, notability,
                 tuple(_text(c) for c in cells[6:10]), _text(cells[10]), value, _text(cells[12]), _text(cells[13]))


def _facts(inner: str) -> list[_Fact]:
    facts: list[_Fact] = []
    seen: set[float] = set()
    header = False
    for line in inner.split("\n"):
        if not trim(line):
            continue
        cells = _cells(line)
        if cells is None:
            continue
        if not header:
            lowered = [js_lower(c) for c in cells]
            header = "claim" in lowered and "kind" in lowered
            continue
        if all(_SEPARATOR_CELL.match(c) for c in cells):
            continue
        fact = _parse_row(cells, seen)
        if fact is not None:
            facts.append(fact)
    return facts


def _to_fixed(x: float, digits: int) -> str:
    # Number.prototype.toFixed: the nearest, ties to the larger; String(x) from 1e21 up.
    if abs(x) >= 1e21:
        return js_number(x)
    exact = Decimal(x).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP if x >= 0 else ROUND_HALF_DOWN)
    text = f"{exact:f}"
    return text[1:] if text.startswith("-") and Decimal(text) == 0 else text


def _confidence(c: float) -> str:
    if c.is_integer():
        return _to_fixed(c, 1)
    return js_number(float(_to_fixed(c, 2)))


def _escape(cell: str | None) -> str:
    return (cell or "").replace("|", "\\|")


def _render(facts: list[_Fact]) -> str:
    typed = any(f.typed for f in facts)
    lines = ["", _TYPED_HEADER if typed else _HEADER, _TYPED_SEPARATOR if typed else _SEPARATOR]
    for f in facts:
        claim = f"~~{f.claim}~~" if f.struck else f.claim
        line = (f"| {js_number(f.row)} | {_escape(claim)} | {f.kind} | {_confidence(f.confidence)} | {f.visibility} |"
                f" {f.notability} | " + " | ".join(_escape(c) for c in f.cells) + " |")
        if typed:
            value = "" if f.value is None else js_number(f.value)
            line += f" {_escape(f.metric)} | {_escape(value)} | {_escape(f.unit)} | {_escape(f.period)} |"
        lines.append(line)
    lines.append("")
    return FACTS_BEGIN + "\n".join(lines) + FACTS_END


def strip_private_facts(body: str) -> str:
    begin = body.find(FACTS_BEGIN)
    end = body.find(FACTS_END, begin + len(FACTS_BEGIN)) if begin != -1 else -1
    if end == -1:
        return body
    world = [f for f in _facts(body[begin + len(FACTS_BEGIN) : end]) if f.visibility == "world"]
    return body[:begin] + _render(world) + body[end + len(FACTS_END) :]
