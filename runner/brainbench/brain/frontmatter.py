"""Split a seed page into frontmatter and body exactly as gbrain's parseMarkdown does.

Three steps of gbrain (src/core/markdown.ts), each with its own idea of where the
frontmatter is, and all three decide what a page is:

1. ``quoteAmbiguousFrontmatterScalars``: when the page opens with ``---`` + newline and a
   later ``---`` line closes it, each top-level ``key: value`` line whose unquoted value holds
   ``": "`` or ends with ``:`` is double-quoted, and the opener is rewritten as ``---\\n``;
2. gray-matter 4 on that text: an opener ``---`` at the very start (after a BOM), not
   ``----``; the rest of the opener line names the engine (``yaml``/``yml``, ``json``; any
   other is an error); the block ends at the first ``\\n---`` anywhere (``---x`` too); a
   block of only comments is ``{}``;
3. the validator on the *original* text: the first non-blank line must be ``---`` (after
   trimming), the next ``---`` line closes; when the block between looks like ``key:`` fields
   and either gray-matter threw or js-yaml cannot read that block (without step 1's quoting),
   the page is refused ("Invalid YAML frontmatter").  So ``title: Re: x`` is refused, and a
   page that gray-matter cannot read but the validator does not see is kept, with no
   frontmatter and the whole text as its body.

The frontmatter is then ``{...data}``: a document that is a string or a list becomes an
object of its indices (jsvalue.spread).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from brainbench.brain import jsyaml
from brainbench.brain.jsvalue import spread
from brainbench.jsjson import json_parse_number
from brainbench.jsstring import WS, trim

__all__ = ["Frontmatter", "FrontmatterError", "read_frontmatter"]

_DOT = r"[^\n\r\u2028\u2029]"  # JavaScript's "."
_FENCE = re.compile(r"\A---\r?\n(.*?)\r?\n---(\r?\n|\Z)", re.S)
_AMBIGUOUS_LINE = re.compile(rf"([a-zA-Z_][a-zA-Z0-9_]*):[ \t]+({_DOT}+)\Z")
# /^\s*#[^\n]+/gm: JavaScript's multiline ^ also follows CR, U+2028 and U+2029.
_COMMENT_LINES = re.compile(rf"(?:\A|(?<=[\n\r\u2028\u2029])){WS}*#[^\n]+")
_FIELD = re.compile(rf"(?:['\"][^'\"]+['\"]|[A-Za-z_][A-Za-z0-9_.-]*){WS}*:")


class FrontmatterError(ValueError):
    """gbrain refuses the page: import status ``error`` (its YAML_PARSE finding)."""


class _EngineError(ValueError):
    """gray-matter threw while reading the block."""


@dataclass(frozen=True)
class Frontmatter:
    data: dict[str, Any]  # {...parsed}, JavaScript values (jsvalue)
    body: str


def _quote_ambiguous(content: str) -> str:
    m = _FENCE.match(content)
    if m is None:
        return content
    lines = []
    for line in m.group(1).split("\n"):
        kv = _AMBIGUOUS_LINE.match(line)
        if kv is not None:
            value = kv.group(2)
            if value[0] not in "'\"[{|>" and (": " in value or value.endswith(":")):
                line = kv.group(1) + ': "' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
        lines.append(line)
    return "---\n" + "\n".join(lines) + "\n---" + m.group(2) + content[m.end() :]


def _no_constant(name: str) -> Any:
    raise ValueError(f"Unexpected token {name[0]}")


def _engine(language: str, block: str) -> Any:
    name = language.lower()
    if name in ("yaml", "yml"):
        try:
            return jsyaml.load(block)
        except jsyaml.JsYamlError as exc:
            raise _EngineError(str(exc)) from exc
    if name == "json":
        try:
            return json.loads(block, parse_int=json_parse_number, parse_float=json_parse_number,
                              parse_constant=_no_constant)
        except (ValueError, RecursionError) as exc:
            raise _EngineError(f"invalid JSON frontmatter: {exc}") from exc
    # gray-matter evaluates ---js / ---javascript blocks as JavaScript; we cannot, and treat
    # them as unreadable (what gbrain does with a block whose code throws).
    raise _EngineError(f'gray-matter engine "{language}" is not available')


def _gray_matter(text: str) -> tuple[Any, str]:
    """gray-matter 4's ``matter(text)``: (data, content); raises _EngineError where it throws."""
    if text == "":
        return {}, text
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.startswith("---") or text[3:4] == "-":
        return {}, text
    rest = text[3:]
    newline = re.search(r"\r?\n", rest)
    raw = rest[: newline.start()] if newline else rest[:-1]
    language = "yaml"
    if trim(raw):
        language = trim(raw)
        rest = rest[len(raw) :]
    close = rest.find("\n---")
    if close == -1:
        close = len(rest)
    block = rest[:close]
    data: Any = {} if trim(_COMMENT_LINES.sub("", block)) == "" else _engine(language, block)
    if data is None:
        data = {}  # gray-matter's excerpt step: a null document is {}
    if close == len(rest):
        return data, ""
    content = rest[close + 4 :]
    if content.startswith("\r"):
        content = content[1:]
    if content.startswith("\n"):
        content = content[1:]
    return data, content


def _validator_block(content: str) -> str | None:
    """The block gbrain's validator checks: first non-blank line ``---``, up to the next ``---`` line."""
    lines = content.split("\n")
    first = next((i for i, line in enumerate(lines) if trim(line)), None)
    if first is None or trim(lines[first]) != "---":
        return None
    close = next((i for i in range(first + 1, len(lines)) if trim(lines[i]) == "---"), None)
    if close is None:
        return None
    return trim("\n".join(lines[first + 1 : close]))


def _looks_like_fields(block: str) -> bool:
    for line in block.split("\n"):
        t = trim(line)
        if t and not t.startswith("#") and _FIELD.match(t):
            return True
    return False


def read_frontmatter(content: str) -> Frontmatter:
    """The page's frontmatter object and body, or ``FrontmatterError`` where gbrain refuses it."""
    failure: str | None = None
    try:
        data, body = _gray_matter(_quote_ambiguous(content))
    except _EngineError as exc:
        failure, data, body = str(exc), {}, content
    block = _validator_block(content)
    if block is not None and _looks_like_fields(block):
        if failure is None:
            try:
                jsyaml.load(block)
            except jsyaml.JsYamlError as exc:
                failure = str(exc)
        if failure is not None:
            raise FrontmatterError(f"unparsable YAML frontmatter: {failure}")
    return Frontmatter(spread(data), body)
