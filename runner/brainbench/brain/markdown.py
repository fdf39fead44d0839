"""Parse a seed page (frontmatter + markdown body) and compute its content_hash, as gbrain does.

gbrain's ``parseMarkdown`` and ``importFromContent`` (src/core/markdown.ts, import-file.ts,
utils.ts ``contentHash``).  The hash must equal gbrain's byte for byte (spec §2.4): the
resolver's row order -- and so which same-title page a pointer budget keeps -- is
ascending content_hash.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from brainbench.brain.frontmatter import FrontmatterError, read_frontmatter
from brainbench.brain.jsvalue import js_string, to_json
from brainbench.jscase import js_lower
from brainbench.jsdate import JSDate
from brainbench.jsjson import js_sorted, stringify
from brainbench.jsstring import NOT_WS, WS, trim, utf8_bytes

MAX_CONTENT_BYTES = 5_000_000
_STRIPPED_KEYS = ("type", "title", "tags", "slug")
# utils.ts HASH_EPHEMERAL_FRONTMATTER_KEYS: timestamps and the content-sanity markers.
_EPHEMERAL_KEYS = ("captured_at", "ingested_at", "quarantine", "content_flag", "embed_skip")
# markdown.ts GBRAIN_BASE_PATH_PREFIXES, matched anywhere in "/" + slug + ".md", in this order.
_TYPE_BY_PATH: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("writing", ("/writing/",)),
    ("analysis", ("/wiki/analysis/",)),
    ("guide", ("/wiki/guides/", "/wiki/guide/")),
    ("hardware", ("/wiki/hardware/",)),
    ("architecture", ("/wiki/architecture/",)),
    ("concept", ("/wiki/concepts/", "/wiki/concept/")),
    ("person", ("/people/", "/person/")),
    ("company", ("/companies/", "/company/")),
    ("deal", ("/deals/", "/deal/")),
    ("yc", ("/yc/",)),
    ("civic", ("/civic/",)),
    ("project", ("/projects/", "/project/")),
    ("source", ("/sources/", "/source/")),
    ("media", ("/media/",)),
    ("email", ("/emails/", "/email/")),
    ("slack", ("/slack/",)),
    ("calendar-event", ("/cal/", "/calendar/")),
    ("note", ("/notes/", "/note/")),
    ("meeting", ("/meetings/", "/meeting/")),
    ("event", ("/life/events/",)),
    ("diary", ("/life/diary/",)),
)
_DOT = r"[^\n\r\u2028\u2029]"  # JavaScript's "."
_CODE_FENCE = re.compile(rf"{WS}*(`{{3,}}|~{{3,}})")
_H1 = re.compile(rf"#(?!#){WS}+({_DOT}+?){WS}*\Z")
_CLOSING_HASHES = re.compile(rf"{WS}+#+{WS}*\Z")
_MD_SUFFIX = re.compile(r"\.[mM][dD]\Z")
_WORD_START = re.compile(r"\b\w", re.ASCII)  # JavaScript's \b\w: ASCII words only
# findTimelineSplitIndex / findBareTimelineSection; /i without u folds ASCII only.
_DECORATED = re.compile(rf"---{WS}+timeline{WS}+---\Z", re.I | re.A)
_TIMELINE_HEADING = re.compile(rf"##{WS}+(?:timeline|history)\b", re.I | re.A)
_H2 = re.compile(rf"##{WS}+{NOT_WS}")
_DATED_BULLET = re.compile(rf"{WS}*[-*+]{WS}+\**[0-9]{{4}}\b", re.A)
_CONTINUATION = re.compile(rf"{WS}{{2,}}{NOT_WS}")


class PageParseError(ValueError):
    """The page cannot be imported (gbrain: import status ``error``, or ``skipped`` when too big)."""


@dataclass(frozen=True)
class ParsedPage:
    slug: str
    type: str
    title: str
    compiled_truth: str
    timeline: str
    # The stored frontmatter (minus type/title/tags/slug) as JavaScript values: aliases are
    # read from it (a date among them is no string); ``stored_json`` is what the row holds.
    frontmatter: dict[str, Any]
    tags: list[str]
    content_hash: str
    # For the seed contract's document: the whole frontmatter as JSON and the text after it.
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""

    @property
    def stored_json(self) -> str:
        """``JSON.stringify(frontmatter)``: the row's frontmatter (a date is its ISO string)."""
        return stringify(to_json(self.frontmatter))


def coerce_string(value: Any) -> str:
    """gbrain's coerceFrontmatterString: '' for null, a date's ISO day, else ``String(value)``."""
    if value is None:
        return ""
    if isinstance(value, JSDate):
        return value.iso()[:10]
    return js_string(value)


def infer_type(slug: str) -> str:
    path = js_lower("/" + slug + ".md")
    return next((t for t, prefixes in _TYPE_BY_PATH if any(p in path for p in prefixes)), "concept")


def title_from_body(body: str) -> str:
    """The first ``# H1`` outside fenced code; a closing ``#`` run is dropped only after whitespace."""
    in_fence = False
    for raw in body.split("\n"):
        if _CODE_FENCE.match(raw):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _H1.match(raw)
        if m:
            return trim(_CLOSING_HASHES.sub("", m.group(1)))
    return ""


def humanize(slug: str) -> str:
    """inferTitle: the file name, ``-``/``_`` as spaces, each ASCII word's first letter capitalised."""
    name = _MD_SUFFIX.sub("", (slug + ".md").split("/")[-1]) or "Untitled"
    return _WORD_START.sub(lambda m: m.group().upper(), re.sub(r"[-_]", " ", name))


def extract_tags(frontmatter: dict[str, Any]) -> list[str]:
    """gbrain's extractTags: an array's items as ``String()``, a string split on commas, else none."""
    tags = frontmatter.get("tags")
    if isinstance(tags, list):
        return [js_string(t) for t in tags]
    if isinstance(tags, str):
        return [t for t in (trim(part) for part in tags.split(",")) if t]
    return []  # absent, falsy, a number, a date or an object


def _bare_timeline_section(lines: list[str]) -> tuple[int, int] | None:
    in_fence = False
    for i, line in enumerate(lines):
        if _CODE_FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or not _TIMELINE_HEADING.match(trim(line)) or not trim("\n".join(lines[:i])):
            continue
        end, bullets, shaped = len(lines), 0, True
        for j in range(i + 1, len(lines)):
            t = trim(lines[j])
            if _H2.match(t):
                end = j
                break
            if not t:
                continue
            if _DATED_BULLET.match(lines[j]):
                bullets += 1
                continue
            if bullets and _CONTINUATION.match(lines[j]):
                continue
            shaped = False
            break
        if shaped and bullets:
            return i, end
    return None


def _timeline_split(lines: list[str]) -> int:
    for i, line in enumerate(lines):
        t = trim(line)
        if t in ("<!-- timeline -->", "<!--timeline-->") or _DECORATED.match(t):
            return i
        if t == "---" and trim("\n".join(lines[:i])):
            following = next((trim(n) for n in lines[i + 1 :] if trim(n)), None)
            if following is not None and _TIMELINE_HEADING.match(following):
                return i
    return -1


def split_body(body: str) -> tuple[str, str]:
    """gbrain's splitBody: (compiled_truth, timeline), neither trimmed."""
    lines = body.split("\n")
    at = _timeline_split(lines)
    if at != -1:
        return "\n".join(lines[:at]), "\n".join(lines[at + 1 :])
    section = _bare_timeline_section(lines)
    if section is not None:
        start, end = section
        return "\n".join(lines[:start] + lines[end:]), "\n".join(lines[start:end])
    return body, ""


def content_hash(title: str, page_type: str, compiled: str, timeline: str, frontmatter: dict[str, Any],
                 tags: list[str]) -> str:
    """utils.ts contentHash: JSON.stringify of this exact shape, SHA-256 of its UTF-8.

    Tags are sorted as JavaScript sorts strings (UTF-16 code units), duplicates kept; the
    frontmatter loses its ephemeral keys; dates are ISO strings, NaN and Infinity null.
    """
    hashed = {k: v for k, v in frontmatter.items() if k not in _EPHEMERAL_KEYS and k != "tags"}
    canonical = {"title": title, "type": page_type, "compiled_truth": compiled, "timeline": timeline,
                 "frontmatter": to_json(hashed), "tags": js_sorted(tags)}
    return hashlib.sha256(utf8_bytes(stringify(canonical))).hexdigest()


# A run seeds each fixture's pages once per seam (three times by default): the same page is
# parsed once.  Callers never change a parsed page (they copy its frontmatter first); a page
# that does not parse raises every time, as exceptions are not cached.
@lru_cache(maxsize=2048)
def parse_page(slug: str, content: str) -> ParsedPage:
    """``slug`` is already the stored (validated, lower-cased) slug."""
    if len(utf8_bytes(content)) > MAX_CONTENT_BYTES:
        raise PageParseError(f"content exceeds {MAX_CONTENT_BYTES} bytes (gbrain skips such pages)")
    try:
        front = read_frontmatter(content)
        data = front.data
        explicit_type = coerce_string(data.get("type"))
        title = trim(coerce_string(data.get("title"))) or title_from_body(front.body) or humanize(slug)
    except FrontmatterError as exc:
        raise PageParseError(str(exc)) from exc
    except ValueError as exc:  # a date JavaScript cannot print (toISOString throws)
        raise PageParseError(f"unusable frontmatter: {exc}") from exc
    page_type = explicit_type or infer_type(slug)
    compiled, timeline = (trim(part) for part in split_body(front.body))
    stored = {k: v for k, v in data.items() if k not in _STRIPPED_KEYS}
    tags = js_sorted(extract_tags(data))
    try:
        digest = content_hash(title, page_type, compiled, timeline, stored, tags)
    except (TypeError, ValueError, RecursionError) as exc:  # JSON.stringify throws (a cycle, too deep)
        raise PageParseError(f"unusable frontmatter: {exc}") from exc
    return ParsedPage(slug, page_type, title, compiled, timeline, stored, tags, digest, to_json(data), front.body)
