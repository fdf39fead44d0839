"""Parse a seed page (YAML frontmatter + markdown body) and compute its content_hash.

The hash must equal gbrain's byte for byte (spec §2.4) because the resolver's
row order — and so which pages fit a pointer budget — is ascending content_hash.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from brainbench.jsjson import stringify
from brainbench.jsstring import WS, trim, utf8_bytes

MAX_CONTENT_BYTES = 5_000_000
_STRIPPED_KEYS = ("type", "title", "tags", "slug")
_EPHEMERAL_KEYS = ("captured_at", "ingested_at")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)(?:\r?\n)?^---[ \t]*(?:\r?\n|\Z)", re.S | re.M)
_H1 = re.compile(rf"^#{WS}+(.+?){WS}*#*{WS}*$", re.M)
_TIMELINE = re.compile(
    rf"^(?:<!--{WS}*timeline{WS}*-->|---{WS}*timeline{WS}*---)[ \t]*$|^---[ \t]*\r?\n(?=##{WS}+(?:Timeline|History)\b)",
    re.M | re.I,
)
_TYPE_BY_PREFIX = {
    "people": "person",
    "companies": "company",
    "funds": "org",
    "orgs": "org",
    "concepts": "concept",
    "projects": "project",
    "conversations": "conversation",
}


class PageParseError(ValueError):
    """The page cannot be imported (gbrain: import status ``error``)."""


def _js_key(key: object) -> str:
    """The property name a JS object gives a YAML key (``String(key)``)."""
    if key is None or isinstance(key, bool):
        return {None: "null", True: "true", False: "false"}[key]
    return str(key)


class _Yaml12Loader(yaml.SafeLoader):
    """SafeLoader with YAML 1.2 booleans: js-yaml reads ``yes``/``on`` as strings.

    Like js-yaml it refuses a mapping that repeats a key (PyYAML would keep the
    last); keys compare as the strings a JS object would hold.
    """

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[object, object]:
        if isinstance(node, yaml.MappingNode):
            seen: set[str] = set()
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue  # merged keys may override, as in js-yaml
                key = self.construct_object(key_node, deep=True)
                as_js = _js_key(key)
                if as_js in seen:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark,
                        f"duplicated mapping key {as_js!r}", key_node.start_mark)
                seen.add(as_js)
        return super().construct_mapping(node, deep=deep)  # type: ignore[no-any-return]


_Yaml12Loader.yaml_implicit_resolvers = {
    key: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for key, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.copy().items()
}
_Yaml12Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


def _quote_ambiguous(front: str) -> str:
    # gbrain double-quotes top-level scalars that YAML would misread as maps.
    out = []
    for line in front.split("\n"):
        m = re.match(rf"^([A-Za-z0-9_-]+):[ \t]+(.+?){WS}*$", line)
        if m and m.group(2)[0] not in "\"'[{|>&*!" and (": " in m.group(2) or m.group(2).endswith(":")):
            value = m.group(2).replace("\\", "\\\\").replace('"', '\\"')
            line = f'{m.group(1)}: "{value}"'
        out.append(line)
    return "\n".join(out)


def _jsonable(value: Any) -> Any:
    # js-yaml turns timestamps into Date objects, which JSON.stringify writes as ISO-8601 UTC.
    if isinstance(value, dt.datetime):
        v = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return v.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{v.microsecond // 1000:03d}Z"
    if isinstance(value, dt.date):
        return value.isoformat() + "T00:00:00.000Z"
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


@dataclass(frozen=True)
class ParsedPage:
    slug: str
    type: str
    title: str
    compiled_truth: str
    timeline: str
    frontmatter: dict[str, Any]
    tags: list[str]
    content_hash: str
    # For the seed contract's document: the whole parsed frontmatter and the text after it.
    meta: dict[str, Any] = field(default_factory=dict)
    body: str = ""


def _yaml_reason(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    if problem and mark is not None:
        return f"{problem} (frontmatter line {mark.line + 1}, column {mark.column + 1})"
    return str(exc).splitlines()[0]


def _humanize(slug: str) -> str:
    last = slug.rsplit("/", 1)[-1]
    return " ".join(w.capitalize() for w in re.split(rf"[-_]|{WS}", last) if w) or slug


def _split_body(body: str) -> tuple[str, str]:
    m = _TIMELINE.search(body)
    if m is None:
        return trim(body), ""
    return trim(body[: m.start()]), trim(body[m.end() :])


def _tags(value: Any) -> list[str]:
    if isinstance(value, str):
        items = [trim(t) for t in value.split(",")]
    elif isinstance(value, list):
        items = [trim(str(t)) for t in value if t is not None]
    else:
        items = []
    return sorted({t for t in items if t})


def parse_page(slug: str, content: str) -> ParsedPage:
    if len(utf8_bytes(content)) > MAX_CONTENT_BYTES:
        raise PageParseError(f"content exceeds {MAX_CONTENT_BYTES} bytes (gbrain skips such pages)")
    meta: dict[str, Any] = {}
    body = content
    m = _FRONT.match(content)
    if m:
        try:
            loaded = yaml.load(_quote_ambiguous(m.group(1)), Loader=_Yaml12Loader)
        except yaml.YAMLError as exc:
            raise PageParseError(f"unparsable YAML frontmatter: {_yaml_reason(exc)}") from exc
        except (ValueError, TypeError, RecursionError) as exc:  # e.g. a timestamp no calendar has
            raise PageParseError(f"unusable YAML frontmatter: {exc}") from exc
        if loaded is not None and not isinstance(loaded, dict):
            raise PageParseError("frontmatter is not a mapping")
        meta = _jsonable(loaded or {})
        body = content[m.end() :]
    title_raw = meta.get("title")
    title = trim(str(title_raw)) if title_raw is not None else ""
    if not title:
        h1 = _H1.search(body)
        title = trim(h1.group(1)) if h1 else _humanize(slug)
    type_raw = meta.get("type")
    page_type = str(type_raw) if type_raw is not None else _TYPE_BY_PREFIX.get(slug.split("/", 1)[0], "concept")
    compiled, timeline = _split_body(body)
    stored = {k: v for k, v in meta.items() if k not in _STRIPPED_KEYS}
    tags = _tags(meta.get("tags"))
    hashed_front = {k: v for k, v in stored.items() if k not in _EPHEMERAL_KEYS}
    canonical = {
        "title": title,
        "type": page_type,
        "compiled_truth": compiled,
        "timeline": timeline,
        "frontmatter": hashed_front,
        "tags": tags,
    }
    digest = hashlib.sha256(stringify(canonical).encode("utf-8")).hexdigest()
    return ParsedPage(slug, page_type, title, compiled, timeline, stored, tags, digest, meta, body)
