"""Resolve candidates to brain pages within one source (spec §3.3–§3.5)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import psycopg

from brainbench.brain import store
from brainbench.brain.aliases import normalize_alias
from brainbench.brain.store import PageRow
from brainbench.jscase import UPPER, js_lower
from brainbench.jsstring import WS, js_len, js_slice, trim, trim_end
from brainbench.reflex.candidates import CJK_CHARS, Candidate
from brainbench.reflex.fences import strip_private_facts, strip_takes
from brainbench.reflex.labels import Trust
from brainbench.reflex.render import Pointer
from brainbench.reflex.trust_gate import TrustGate

Suppression = Literal["slug-and-title", "slug-only"]
ARM_CONFIDENCE = {"alias": 0.9, "title": 0.8, "title-surname": 0.72, "cjk-title": 0.72, "slug-suffix": 0.6}
DEFAULT_MAX_POINTERS = 3
_UPPER_FIRST = re.compile(f"^[{UPPER}]")
_PURE_CJK = re.compile(f"^[{CJK_CHARS}]+\\Z")
_WS_RUN = re.compile(WS + "+")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])" + WS)
# gbrain: /^---[\s\S]*?---\s*/m -- the first block opening at any line start; JS's
# multiline ^ also follows CR, U+2028 and U+2029, which Python's re.M does not.
_FRONT_BLOCK = re.compile(r"(?:\A|(?<=[\n\r\u2028\u2029]))---.*?---" + WS + "*", re.S)


def slugify(text: str) -> str:
    out = unicodedata.normalize("NFKD", js_lower(text))
    out = re.sub(r"[\u0300-\u036f]", "", out)
    out = re.sub(r"[^a-z0-9]+", "-", out)
    return out.strip("-")


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def clip(text: str, n: int) -> str:
    """gbrain's clip in UTF-16 units: the cut may split a surrogate pair, leaving its lone half."""
    return text if js_len(text) <= n else trim_end(js_slice(text, 0, n - 1)) + "…"


def synopsis(page: PageRow) -> str:
    summary = page.frontmatter.get("summary")
    if isinstance(summary, str) and trim(summary):
        return clip(trim(_WS_RUN.sub(" ", summary)), 160)
    body = strip_private_facts(strip_takes(page.compiled_truth))
    body = _FRONT_BLOCK.sub("", body, count=1)
    for line in body.split("\n"):
        line = trim(line)
        if line and not line.startswith("#") and not line.startswith("<!--"):
            first = _SENTENCE_SPLIT.split(line, maxsplit=1)[0]
            return clip(trim(_WS_RUN.sub(" ", first)), 160)
    return ""


@dataclass
class _Inputs:
    alias_norms: list[str] = field(default_factory=list)
    weak_norms: list[str] = field(default_factory=list)
    display_by_norm: dict[str, str] = field(default_factory=dict)
    titles_lc: list[str] = field(default_factory=list)
    title_to_norm: dict[str, str] = field(default_factory=dict)
    slugs: list[str] = field(default_factory=list)
    suffixes: list[str] = field(default_factory=list)
    slug_to_norm: dict[str, str] = field(default_factory=dict)
    surname_tokens: dict[str, str] = field(default_factory=dict)  # token → norm, first wins

    @property
    def surname_patterns(self) -> list[str]:
        return ["% " + _escape_like(t) for t in self.surname_tokens]


def _prepare(candidates: Sequence[Candidate], lexical_arms: bool) -> _Inputs:
    ins = _Inputs()
    for c in candidates:
        norm = normalize_alias(c.query)
        if not norm:
            continue
        if c.weak:
            if not lexical_arms:
                continue
            ins.display_by_norm.setdefault(norm, c.display)
            if norm not in ins.weak_norms:
                ins.weak_norms.append(norm)
                ins.alias_norms.append(norm)
            continue
        ins.display_by_norm.setdefault(norm, c.display)
        ins.alias_norms.append(norm)
        title_lc = js_lower(c.query)
        ins.titles_lc.append(title_lc)
        ins.title_to_norm.setdefault(title_lc, norm)
        slug = slugify(c.query)
        if slug:
            ins.slugs.append(slug)
            ins.suffixes.append("%/" + slug)
            ins.slug_to_norm.setdefault(slug, norm)
        single_token = not _WS_RUN.search(c.query)
        if lexical_arms and single_token and js_len(c.query) >= 3 and _UPPER_FIRST.match(c.query):
            ins.surname_tokens.setdefault(js_lower(c.query), norm)
    return ins


@dataclass(frozen=True)
class _Hit:
    slug: str
    arm: str
    norm: str


def _lexical_hits(rows: list[PageRow], ins: _Inputs, push: list[_Hit], seen: set[str]) -> None:
    titles = set(ins.titles_lc)
    collected: dict[str, list[PageRow]] = {}
    coverage: dict[str, int] = {}
    for row in rows:
        title_lc = js_lower(row.title)
        token = next((t for t in ins.surname_tokens if title_lc.endswith(" " + t)), None)
        if row.type == "person" and token is not None:
            coverage[token] = coverage.get(token, 0) + 1
        if title_lc in titles:
            _push(push, seen, _Hit(row.slug, "title", ins.title_to_norm[title_lc]))
        elif row.slug in ins.slug_to_norm or row.slug.rsplit("/", 1)[-1] in ins.slug_to_norm:
            norm = ins.slug_to_norm.get(row.slug) or ins.slug_to_norm[row.slug.rsplit("/", 1)[-1]]
            _push(push, seen, _Hit(row.slug, "slug-suffix", norm))
        elif ins.surname_tokens and row.type == "person" and token is not None:
            collected.setdefault(token, []).append(row)
    # An ambiguous surname injects nothing, even when a namesake was claimed by its title.
    for token, hits in collected.items():
        if len(hits) == 1 and coverage.get(token) == 1:
            _push(push, seen, _Hit(hits[0].slug, "title-surname", ins.surname_tokens[token]))


def _push(out: list[_Hit], seen: set[str], hit: _Hit) -> None:
    if hit.slug not in seen:
        seen.add(hit.slug)
        out.append(hit)


def resolve_pointers(
    conn: psycopg.Connection,
    source_id: str,
    candidates: Sequence[Candidate],
    *,
    max_pointers: int = DEFAULT_MAX_POINTERS,
    prior_context: str | None = None,
    suppression: Suppression = "slug-and-title",
    lexical_arms: bool = True,
    gate: TrustGate | None = None,
) -> list[Pointer]:
    """Pointers to pages of ``source_id`` named by the candidates, in gbrain's order, within budget.

    With a ``gate`` (gbrain 0.60) every pointer carries its trust label, and pages the gate
    does not admit are skipped before suppression and the budget; without one, v0.46.
    """
    ins = _prepare(candidates, lexical_arms)
    if not ins.alias_norms:
        return []
    hits: list[_Hit] = []
    seen: set[str] = set()
    alias = store.alias_hits(conn, source_id, ins.alias_norms)
    weak = set(ins.weak_norms)
    for norm in ins.alias_norms:
        if norm not in weak and len(alias.get(norm, [])) == 1:
            _push(hits, seen, _Hit(alias[norm][0], "alias", norm))
    for norm in ins.weak_norms:
        if len(alias.get(norm, [])) == 1:
            _push(hits, seen, _Hit(alias[norm][0], "alias", norm))
    rows: list[PageRow] = []
    if ins.titles_lc or ins.slugs:
        rows = store.lexical_rows(conn, source_id, ins.titles_lc, ins.slugs, ins.suffixes, ins.surname_patterns)
        _lexical_hits(rows, ins, hits, seen)
    pages = {r.slug: r for r in rows}
    if lexical_arms:
        _cjk_hits(conn, source_id, ins, hits, seen, pages)
    missing = [h.slug for h in hits if h.slug not in pages]
    pages.update(store.pages_by_slug(conn, source_id, missing))
    admitted = gate.admit(conn, source_id, [h.slug for h in hits if h.slug in pages]) if gate else None
    return _budget(hits, pages, ins, max_pointers, prior_context, suppression, source_id, admitted)


def _cjk_hits(conn: psycopg.Connection, source_id: str, ins: _Inputs, push: list[_Hit], seen: set[str],
              pages: dict[str, PageRow]) -> None:
    """gbrain's 'cjk-title' arm: a pure-CJK weak norm no earlier arm resolved, equal to exactly one
    page's lower-cased title or slug (an ambiguous gram injects nothing)."""
    resolved = {h.norm for h in push}
    norms = [n for n in ins.weak_norms if _PURE_CJK.match(n) and n not in resolved]
    if not norms:
        return
    matches: dict[str, list[str]] = {}
    for row in store.lexical_rows(conn, source_id, norms, norms, [], []):
        pages[row.slug] = row
        title_lc = js_lower(row.title)
        for norm in norms:
            if title_lc == norm or row.slug == norm:
                matches.setdefault(norm, []).append(row.slug)
    for norm, slugs in matches.items():
        if len(slugs) == 1:
            _push(push, seen, _Hit(slugs[0], "cjk-title", norm))


def _suppressed(page: PageRow, prior_lc: str, suppression: Suppression) -> bool:
    if js_lower(page.slug) in prior_lc:
        return True
    if suppression == "slug-and-title":
        title = js_lower(page.title)
        # ASCII \W on purpose: gbrain's JS regex has no u flag here.
        if title and re.search(r"(^|\W)" + re.escape(title) + r"(\W|$)", prior_lc, re.ASCII):
            return True
    return False


def _budget(
    hits: list[_Hit],
    pages: dict[str, PageRow],
    ins: _Inputs,
    max_pointers: int,
    prior_context: str | None,
    suppression: Suppression,
    source_id: str,
    admitted: dict[str, Trust] | None,
) -> list[Pointer]:
    prior_lc = js_lower(prior_context or "")
    out: list[Pointer] = []
    for hit in hits:
        if len(out) >= max_pointers:
            break
        page = pages.get(hit.slug)
        if page is None or (admitted is not None and hit.slug not in admitted):
            continue
        if prior_lc and _suppressed(page, prior_lc, suppression):
            continue
        display = ins.display_by_norm.get(normalize_alias(page.title)) or page.title or hit.slug.rsplit("/", 1)[-1]
        trust = admitted.get(hit.slug) if admitted is not None else None
        out.append(Pointer(display, page.slug, source_id, synopsis(page), hit.arm, ARM_CONFIDENCE[hit.arm], hit.norm,
                           trust))
    return out
