"""YAML as gbrain reads it: js-yaml 3 (``safeLoad``, gray-matter's engine), on PyYAML's parser.

PyYAML and js-yaml 3 both speak YAML 1.1 syntax, but they read the same text into
different values and refuse different documents.  The parser (scanner, events, node
graph) is PyYAML's; what the nodes mean is js-yaml 3's DEFAULT_SAFE_SCHEMA:

* plain scalars resolve in js-yaml's order null, bool, int, float, timestamp, merge:
  booleans are only ``true``/``false`` (``yes``, ``on`` stay strings), ``1e3`` and ``1.``
  are floats, ``012`` is octal, ``1_000`` and ``1:30`` (sexagesimal) are integers, ``=`` is a
  string (PyYAML refuses it), numbers are doubles;
* a timestamp is a ``Date`` built with ``Date.UTC``: an impossible day rolls forward
  (``2024-02-30`` is 1 March; PyYAML refuses it), a year 0–99 is 1900–1999;
* mapping keys become ``String(key)`` and a key repeated after that conversion is refused
  (``1`` and ``1.0``); ``<<`` merges in js-yaml's order and override rules;
* only LF and CR break lines: U+0085, U+2028 and U+2029 are content (PyYAML breaks there);
* an anchor may be defined again (the later one wins).

Refusals raise ``JsYamlError`` with PyYAML's or our reason (never js-yaml's exact words).
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import BaseResolver
from yaml.scanner import Scanner
from yaml.tokens import FlowEntryToken

from brainbench.brain.jsvalue import JSBuffer, js_string
from brainbench.jsdate import JSDate, make_time_value

__all__ = ["JsYamlError", "load"]

_TAG = "tag:yaml.org,2002:"
NULL, BOOL, INT, FLOAT, TIMESTAMP, MERGE = (_TAG + t for t in ("null", "bool", "int", "float", "timestamp", "merge"))
STR, SEQ, MAP, BINARY, OMAP, PAIRS, SET = (_TAG + t for t in ("str", "seq", "map", "binary", "omap", "pairs", "set"))
_SCALAR_TAGS = {NULL, BOOL, INT, FLOAT, TIMESTAMP, MERGE, STR, BINARY}
_NON_ASCII_BREAKS = ("\x85", "\u2028", "\u2029")
MAX_MERGE_KEYS = 10_000  # js-yaml 3.15's maxTotalMergeKeys


class JsYamlError(ValueError):
    """js-yaml would throw on this document."""


# --- scalar resolution and construction (js-yaml 3 types) ---------------------------------

_FLOAT = re.compile(
    r"(?:[-+]?(?:0|[1-9][0-9_]*)(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?"
    r"|\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
    r"|[-+]?\.(?:inf|Inf|INF)"
    r"|\.(?:nan|NaN|NAN))\Z"
)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{1,2})-([0-9]{1,2})(?:[Tt]|[ \t]+)([0-9]{1,2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]*))?"
    r"(?:[ \t]*(Z|([-+])([0-9]{1,2})(?::([0-9]{2}))?))?\Z"
)
_SEXAGESIMAL_TAIL = re.compile(r"(?::[0-5]?[0-9])+\Z")


def _is_null(s: str) -> bool:
    return s in ("", "~", "null", "Null", "NULL")


def _is_bool(s: str) -> bool:
    return s in ("true", "True", "TRUE", "false", "False", "FALSE")


def _digits(body: str, allowed: str) -> bool:
    """js-yaml's digit loop: ``_`` anywhere but last, at least one digit, nothing else."""
    return (bool(body) and body[-1] != "_" and any(c != "_" for c in body)
            and all(c == "_" or c in allowed for c in body))


def _is_int(s: str) -> bool:
    if not s:
        return False
    body = s[1:] if s[0] in "+-" else s
    if not body:
        return False
    if body[0] == "0":
        if len(body) == 1:
            return True
        if body[1] == "b":
            return _digits(body[2:], "01")
        if body[1] == "x":
            return _digits(body[2:], "0123456789abcdefABCDEF")
        return _digits(body[1:], "01234567")
    if body[0] not in "0123456789":  # "_" first is no int either; and words skip the digit loop
        return False
    head, colon, tail = body.partition(":")
    if not _digits(head, "0123456789"):
        return False
    return not colon or bool(_SEXAGESIMAL_TAIL.match(":" + tail))


def _is_float(s: str) -> bool:
    return bool(_FLOAT.match(s)) and not s.endswith("_")


def _is_timestamp(s: str) -> bool:
    return bool(_DATE.match(s) or _TIMESTAMP.match(s))


def resolve_plain(value: str) -> str:
    """The tag js-yaml gives an untagged plain scalar."""
    for tag, test in ((NULL, _is_null), (BOOL, _is_bool), (INT, _is_int), (FLOAT, _is_float),
                      (TIMESTAMP, _is_timestamp)):
        if test(value):
            return tag
    return MERGE if value == "<<" else STR


def _js_double(n: int) -> int | float:
    # Every JS number is a double: beyond 2**53 an integer is its nearest double.
    if abs(n) <= 2**53:
        return n
    try:
        return float(n)
    except OverflowError:
        return math.inf if n > 0 else -math.inf


def _parse_int_decimal(text: str) -> int | float:
    # parseInt(text, 10) on a digit string: the correctly rounded double.
    value = float(text)
    return int(text) if abs(value) <= 2**53 else value


def _construct_int(data: str) -> int | float:
    value = data.replace("_", "")
    sign = 1
    if value[0] in "+-":
        sign = -1 if value[0] == "-" else 1
        value = value[1:]
    if value == "0":
        return 0
    if value[0] == "0":
        if value[1] == "b":
            return sign * _js_double(int(value[2:], 2))
        if value[1] == "x":
            return sign * _js_double(int(value[2:], 16))
        return sign * _js_double(int(value, 8))
    if ":" in value:
        total: int | float = 0
        base = 1
        for part in reversed(value.split(":")):
            total += _parse_int_decimal(part) * base
            base *= 60
        return sign * (_js_double(total) if isinstance(total, int) else total)
    return sign * _parse_int_decimal(value)


def _construct_float(data: str) -> float | int:
    value = data.replace("_", "").lower()
    sign = -1 if value[0] == "-" else 1
    if value[0] in "+-":
        value = value[1:]
    if value == ".inf":
        return sign * math.inf
    if value == ".nan":
        return math.nan
    if ":" in value:
        total = 0.0
        base = 1
        for part in reversed(value.split(":")):
            total += float(part) * base
            base *= 60
        return sign * total
    result = sign * float(value)
    return int(result) if result.is_integer() and abs(result) <= 2**53 else result


def _construct_timestamp(data: str) -> JSDate:
    m = _DATE.match(data)
    if m:
        return JSDate(make_time_value(int(m[1]), int(m[2]) - 1, int(m[3])))
    m = _TIMESTAMP.match(data)
    assert m is not None
    fraction = 0
    if m[7]:
        fraction = int((m[7][:3] + "000")[:3])
    time = make_time_value(int(m[1]), int(m[2]) - 1, int(m[3]), int(m[4]), int(m[5]), int(m[6]), fraction)
    if m[9]:
        delta = (int(m[10]) * 60 + int(m[11] or 0)) * 60_000
        time -= -delta if m[9] == "-" else delta
    return JSDate(time)


_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _is_binary(data: str) -> bool:
    # Line breaks are skipped; every other character must be base64 (``=`` counted as 6 bits).
    chars = [ch for ch in data if ch not in "\r\n"]
    return all(ch in _BASE64 for ch in chars) and len(chars) * 6 % 8 == 0


def _construct_binary(data: str) -> JSBuffer:
    text = "".join(ch for ch in data if ch not in "\r\n=")
    text = text[: len(text) - 1] if len(text) % 4 == 1 else text  # 6 trailing bits make no byte
    try:
        return JSBuffer(base64.b64decode(text + "=" * (-len(text) % 4)))
    except (binascii.Error, ValueError) as exc:  # pragma: no cover - _is_binary admitted it
        raise JsYamlError(f"invalid !!binary data: {exc}") from exc


# --- the loader ----------------------------------------------------------------------------


class _Loader(Reader, Scanner, Parser, Composer, BaseResolver):
    def __init__(self, stream: str) -> None:
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        Composer.__init__(self)
        BaseResolver.__init__(self)

    # --- scanner: js-yaml's whitespace ---------------------------------------------------

    def scan_to_next_token(self) -> None:
        # Tabs separate like spaces; at the start of a line only the spaces before the first
        # tab count as indentation (js-yaml's lineIndent).  PyYAML refuses tabs here.
        if self.index == 0 and self.peek() == "\ufeff":
            self.forward()
        while True:
            line_start = self.column == 0
            spaces = 0
            while self.peek() == " ":
                self.forward()
                spaces += 1
            if self.peek() == "\t":
                while self.peek() in " \t":
                    self.forward()
                if line_start:
                    self.column = spaces
            if self.peek() == "#":
                while self.peek() not in "\0\r\n":
                    self.forward()
            if not self.scan_line_break():
                return
            if not self.flow_level:
                self.allow_simple_key = True

    def scan_plain_spaces(self, indent: int, start_mark: Any) -> list[str] | None:
        # A tab inside a plain scalar is content, as in js-yaml; PyYAML ends the scalar there.
        length = 0
        while self.peek(length) in " \t":
            length += 1
        if length and self.peek(length) not in "\r\n\0#":
            whitespace = self.prefix(length)
            self.forward(length)
            return [whitespace]
        chunks: list[str] | None = super().scan_plain_spaces(indent, start_mark)
        return chunks

    def stale_possible_simple_keys(self) -> None:
        # js-yaml has no 1024-character limit on an implicit key.
        for level in list(self.possible_simple_keys):
            key = self.possible_simple_keys[level]
            if key.line != self.line:
                if key.required:
                    raise yaml.scanner.ScannerError("while scanning a simple key", key.mark,
                                                    "could not find expected ':'", self.get_mark())
                del self.possible_simple_keys[level]

    # --- parser: an empty entry of a flow collection is null (js-yaml) ---------------------

    def _empty_entry(self, first: bool) -> tuple[bool, bool]:
        """(first, empty): the entry's comma is taken; ``empty`` when another comma follows at once."""
        if not first and self.check_token(FlowEntryToken):
            self.get_token()
            first = True
        return first, first and self.check_token(FlowEntryToken)

    def parse_flow_sequence_entry(self, first: bool = False) -> Any:
        first, empty = self._empty_entry(first)
        if empty:
            self.state = self.parse_flow_sequence_entry
            return self.process_empty_scalar(self.peek_token().start_mark)
        return super().parse_flow_sequence_entry(first=first)

    def parse_flow_mapping_key(self, first: bool = False) -> Any:
        first, empty = self._empty_entry(first)
        if empty:  # an empty key with an empty value
            self.state = self.parse_flow_mapping_empty_value
            return self.process_empty_scalar(self.peek_token().start_mark)
        return super().parse_flow_mapping_key(first=first)

    def resolve(self, kind: type[Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return resolve_plain(value) if implicit[0] else STR
        return SEQ if kind is SequenceNode else MAP

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        # PyYAML refuses an anchor defined twice; js-yaml lets the later one win.
        if not self.check_event(AliasEvent):
            event = self.peek_event()
            if event.anchor is not None:
                self.anchors.pop(event.anchor, None)
        return super().compose_node(parent, index)  # type: ignore[no-any-return]

    def compose_scalar_node(self, anchor: str | None) -> ScalarNode:
        event = self.peek_event()
        node: ScalarNode = super().compose_scalar_node(anchor)
        if event.tag == "!":  # the non-specific tag: a string, never resolved
            node.tag = STR
        return node


class _Builder:
    """Node graph → JavaScript values, by js-yaml's rules."""

    def __init__(self, placeholders: dict[str, str]) -> None:
        self.done: dict[int, Any] = {}
        self.building: set[int] = set()
        self.merged_keys = 0
        self.restore = str.maketrans(placeholders) if placeholders else None

    def text(self, s: str) -> str:
        return s.translate(self.restore) if self.restore else s

    def build(self, node: Node) -> Any:
        key = id(node)
        if key in self.done:
            return self.done[key]
        if key in self.building:
            raise JsYamlError("recursive alias: the document refers to itself")
        self.building.add(key)
        try:
            value = self._build(node)
        finally:
            self.building.discard(key)
        self.done[key] = value
        return value

    def _build(self, node: Node) -> Any:
        tag = node.tag
        if isinstance(node, ScalarNode):
            return self._scalar(tag, self.text(node.value), node)
        if tag in (SEQ, OMAP, PAIRS) and isinstance(node, SequenceNode):
            items = [self.build(child) for child in node.value]
            if tag == OMAP:
                return self._omap(items)
            if tag == PAIRS:
                return self._pairs(items)
            return items
        if tag in (MAP, SET) and isinstance(node, MappingNode):
            mapping = self._mapping(node)
            if tag == SET and any(v is not None for v in mapping.values()):
                raise JsYamlError("cannot resolve a node with !<tag:yaml.org,2002:set> explicit tag")
            return mapping
        if tag in _SCALAR_TAGS or tag in (SEQ, MAP, OMAP, PAIRS, SET):
            kind = "sequence" if isinstance(node, SequenceNode) else "mapping"
            raise JsYamlError(f"unacceptable node kind for !<{tag}> tag; it should not be a {kind}")
        raise JsYamlError(f"unknown tag !<{tag}>")

    def _scalar(self, tag: str, value: str, node: ScalarNode) -> Any:
        checks = {NULL: _is_null, BOOL: _is_bool, INT: _is_int, FLOAT: _is_float, TIMESTAMP: _is_timestamp,
                  MERGE: lambda s: s == "<<", BINARY: _is_binary}
        if tag in checks and not checks[tag](value):
            raise JsYamlError(f"cannot resolve a node with !<{tag}> explicit tag")
        if tag == STR or tag == MERGE:
            return value
        if tag == NULL:
            return None
        if tag == BOOL:
            return value in ("true", "True", "TRUE")
        if tag == INT:
            return _construct_int(value)
        if tag == FLOAT:
            return _construct_float(value)
        if tag == TIMESTAMP:
            return _construct_timestamp(value)
        if tag == BINARY:
            return _construct_binary(value)
        if tag in (SEQ, MAP, OMAP, PAIRS, SET):
            raise JsYamlError(f"unacceptable node kind for !<{tag}> tag; it should not be a scalar")
        raise JsYamlError(f"unknown tag !<{tag}>")

    @staticmethod
    def _omap(items: list[Any]) -> list[Any]:
        seen: set[str] = set()
        for item in items:
            if not isinstance(item, dict) or len(item) != 1 or next(iter(item)) in seen:
                raise JsYamlError("cannot resolve a node with !<tag:yaml.org,2002:omap> explicit tag")
            seen.add(next(iter(item)))
        return items

    @staticmethod
    def _pairs(items: list[Any]) -> list[Any]:
        out: list[Any] = []
        for item in items:
            if not isinstance(item, dict) or len(item) != 1:
                raise JsYamlError("cannot resolve a node with !<tag:yaml.org,2002:pairs> explicit tag")
            out.append(next(iter(item.items())))
        return [list(p) for p in out]

    def _key(self, value: Any) -> str:
        if isinstance(value, list):
            if any(isinstance(item, list) for item in value):
                raise JsYamlError("nested arrays are not supported inside keys")
            value = ["[object Object]" if isinstance(item, dict) else item for item in value]
        return js_string(value)

    def _mapping(self, node: MappingNode) -> dict[str, Any]:
        result: dict[str, Any] = {}
        overridable: set[str] = set()
        for key_node, value_node in node.value:
            value = self.build(value_node)
            if key_node.tag == MERGE:
                for source in value if isinstance(value, list) else [value]:
                    self._merge(result, source, overridable)
                continue
            key = self._key(self.build(key_node))
            if key in result and key not in overridable:
                raise JsYamlError(f"duplicated mapping key {key!r} (line {key_node.start_mark.line + 1})")
            result[key] = value
            overridable.discard(key)
        return result

    def _merge(self, result: dict[str, Any], source: Any, overridable: set[str]) -> None:
        # js-yaml merges any object: a mapping, an array (its indices), a Date (nothing).
        if source is None or isinstance(source, str | int | float | bool):
            raise JsYamlError("cannot merge mappings; the provided source object is unacceptable")
        keys = source if isinstance(source, dict) else {str(i): v for i, v in enumerate(source)} \
            if isinstance(source, list | JSBuffer) else {}
        for key, value in keys.items():
            self.merged_keys += 1
            if self.merged_keys > MAX_MERGE_KEYS:
                raise JsYamlError(f"merge keys exceeded maxTotalMergeKeys ({MAX_MERGE_KEYS})")
            if key not in result:
                result[key] = value
                overridable.add(key)


def _placeholders(text: str) -> dict[str, str]:
    """Private-use stand-ins for the characters PyYAML breaks lines at and js-yaml does not."""
    if not any(ch in text for ch in _NON_ASCII_BREAKS):
        return {}
    free = (chr(c) for c in range(0xF0000, 0xFFFFE) if chr(c) not in text)
    return {ch: next(free) for ch in _NON_ASCII_BREAKS}


def load(text: str) -> Any:
    """``yaml.safeLoad(text)`` of js-yaml 3: the JavaScript value, or ``JsYamlError``."""
    if "\0" in text:
        raise JsYamlError("null byte is not allowed in input")
    # js-yaml appends a final line break when there is none, then drops a leading BOM.
    if text and text[-1] not in "\n\r":
        text += "\n"
    text = text.removeprefix("\ufeff")
    swap = _placeholders(text)
    source = text.translate(str.maketrans(swap)) if swap else text
    loader: _Loader | None = None
    try:
        loader = _Loader(source)
        node = loader.get_single_node()
        if node is None:
            return None  # an empty document: js-yaml's undefined
        return _Builder({v: k for k, v in swap.items()}).build(node)
    except yaml.YAMLError as exc:
        raise JsYamlError(_reason(exc)) from exc
    except RecursionError as exc:
        raise JsYamlError("nesting too deep") from exc
    finally:
        if loader is not None:
            loader.dispose()


def _reason(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__

