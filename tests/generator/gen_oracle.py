"""An independent, set-level re-statement of the reflex rules (spec §3.1, §3.3, §3.5).

It exists so the generator's traps can be checked before (and independently of) the real
reflex: it answers "which pages in the active source can this turn resolve, through which
arm?" and simulates prior-context suppression. It deliberately ignores row order and
pointer budgets (content_hash order is the real reflex's job); trap tests that need
budgets run on the real seams.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import regex
import yaml

STOPWORDS = frozenset("""
i i'm i've i'll you you're he she it it's we we're they they're me him her us them my your his their our
mine yours hers theirs ours this that these those who whom the a an and or but so if as at by for in of on to
up with from into over than then also just what when where why how which whose can could should would will
shall may might must do does did is are am was were be been being has have had hi hey hello thanks thank
please yes no ok okay sure maybe well oh let let's lets
""".split())
COMMON_WORDS = frozenset("""
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december today tomorrow yesterday now soon later tonight morning afternoon evening
week month year meeting call note task here there every some any all one two three first last next new old
good bad great nice thing something anything
""".split())

_CAP = r"\p{Lu}[\p{L}0-9'’\-]*(?:\.\p{L}[\p{L}0-9'’\-]*)*"
_RUN = regex.compile(rf"{_CAP}(?:\s+{_CAP}){{0,3}}")
_WEAK = regex.compile(r"(?<![\p{L}\p{N}'’@-])\p{Ll}[\p{L}\p{N}'’-]{2,}(?![\p{L}\p{N}'’-])")
_HANDLE = re.compile(r"@([A-Za-z0-9_]{2,})")
_SENTENCE_PUNCT = set(".!?:;•-([\"“")


def normalize_alias(s: str) -> str:
    s = unicodedata.normalize("NFKC", s).lower()
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"^[\"'`\[(]+", "", s)
    s = re.sub(r"[\"'`\])]+$", "", s)
    return s.strip()


def strip_possessive(s: str) -> str:
    s = re.sub(r"['’][sS]$", "", s)
    return re.sub(r"['’]$", "", s)


def slugify(s: str) -> str:
    s = unicodedata.normalize("NFKD", s.lower())
    s = "".join(ch for ch in s if not 0x300 <= ord(ch) <= 0x36F)
    return re.sub(r"[^a-z0-9]+", "-", s).strip("-")


def _at_sentence_start(text: str, idx: int) -> bool:
    j = idx - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return j < 0 or text[j] in _SENTENCE_PUNCT


@dataclass(frozen=True)
class Candidates:
    strong: tuple[str, ...]
    weak: tuple[str, ...]


def extract(text: str) -> Candidates:
    acc: dict[str, list] = {}  # norm -> [query, seen_mid, order]

    def consider(raw: str, mid: bool) -> None:
        query = strip_possessive(raw.strip())
        norm = normalize_alias(query)
        if not query or not norm:
            return
        if norm in acc:
            acc[norm][1] = acc[norm][1] or mid
        else:
            acc[norm] = [query, mid, len(acc)]

    for m in _HANDLE.finditer(text):
        consider(m.group(1), True)
    for m in _RUN.finditer(text):
        surface = m.group(0)
        consider(surface, not _at_sentence_start(text, m.start()))
        toks = surface.split()
        k = 0
        while k < len(toks) and strip_possessive(toks[k]).lower() in STOPWORDS:
            k += 1
        if 0 < k < len(toks):
            consider(" ".join(toks[k:]), True)
    strong: list[str] = []
    for _norm, (query, mid, _) in sorted(acc.items(), key=lambda kv: kv[1][2]):
        if " " not in query.strip():
            low = query.lower()
            if len(query) < 2 or re.fullmatch(r"[0-9][0-9.,]*", query) or low in STOPWORDS:
                continue
            if low in COMMON_WORDS and not mid:
                continue
        strong.append(query)
        if len(strong) == 12:
            break
    strong_norms = {normalize_alias(q) for q in strong}
    weak: list[str] = []
    for m in _WEAK.finditer(text):
        if len(weak) >= 32:
            break
        raw = strip_possessive(m.group(0))
        norm = normalize_alias(raw)
        if len(raw) < 3 or raw.lower() in STOPWORDS or raw.lower() in COMMON_WORDS or not norm:
            continue
        if norm in strong_norms or norm in {normalize_alias(w) for w in weak}:
            continue
        weak.append(raw)
    return Candidates(tuple(strong), tuple(weak))


@dataclass(frozen=True)
class Page:
    slug: str
    source_id: str
    title: str
    type: str
    aliases: tuple[str, ...]


def parse_page(slug: str, content: str, source_id: str) -> Page:
    _, fm, _body = content.split("---\n", 2)
    meta = yaml.safe_load(fm)
    aliases = meta.get("aliases") or []
    if isinstance(aliases, str):
        aliases = aliases.split(",")
    return Page(slug, source_id, str(meta["title"]).strip(), str(meta["type"]),
                tuple(normalize_alias(a) for a in aliases if normalize_alias(str(a))))


def brain_pages(fixture: dict) -> list[Page]:
    """Pages of the ACTIVE source only (the bench always scopes lookups to it, §3.3)."""
    active = fixture.get("active_source", "default")
    pages: dict[str, Page] = {}
    for sp in fixture.get("seed_pages", []):
        src = sp.get("source_id", "default")
        if src == active:
            pages[sp["slug"]] = parse_page(sp["slug"], sp["content"], src)
    return list(pages.values())


def resolve(pages: list[Page], cands: Candidates) -> dict[str, str]:
    """slug -> arm for every page the candidates resolve to (no order, no budget)."""
    hits: dict[str, str] = {}

    def alias_hits(norm: str) -> list[Page]:
        return [p for p in pages if norm in p.aliases]

    for q in cands.strong:
        found = alias_hits(normalize_alias(q))
        if len(found) == 1:
            hits.setdefault(found[0].slug, "alias")
    for w in cands.weak:
        found = alias_hits(normalize_alias(w))
        if len(found) == 1:
            hits.setdefault(found[0].slug, "alias-weak")
    titles = {q.lower() for q in cands.strong}
    slugs = {slugify(q) for q in cands.strong if slugify(q)}
    surname_tokens = [q.lower() for q in cands.strong
                      if " " not in q and len(q) >= 3 and regex.match(r"\p{Lu}", q)]
    for p in pages:
        if p.title.lower() in titles:
            hits.setdefault(p.slug, "title")
        elif p.slug in slugs or p.slug.rsplit("/", 1)[-1] in slugs:
            hits.setdefault(p.slug, "slug-suffix")
    for tok in surname_tokens:
        covered = [p for p in pages if p.type == "person" and p.title.lower().endswith(" " + tok)]
        if len(covered) == 1:
            hits.setdefault(covered[0].slug, "title-surname")
    return hits


def suppressed(page: Page, prior: str) -> bool:
    """slug-and-title prior-context suppression (§3.5, ASCII \\W)."""
    low = prior.lower()
    if not low:
        return False
    if page.slug.lower() in low:
        return True
    title = page.title.lower()
    return bool(title) and re.search(r"(^|\W)" + re.escape(title) + r"(\W|$)", low, re.ASCII) is not None


@dataclass(frozen=True)
class TurnTrace:
    turn_id: int
    resolved: dict[str, str]  # before suppression
    injected: tuple[str, ...]  # after openclaw-style suppression, no budget
    window_injected: tuple[str, ...]  # claude-code-style: window re-extraction, slug-only dedupe


def replay(fixture: dict) -> list[TurnTrace]:
    """Replay user turns with openclaw-style prior context and a claude-code-style window."""
    pages = brain_pages(fixture)
    by_slug = {p.slug: p for p in pages}
    prior = ""
    window: list[str] = []
    window_injected_so_far: set[str] = set()
    traces: list[TurnTrace] = []
    for turn in fixture["turns"]:
        text = turn["text"]
        if turn["role"] == "user":
            resolved = resolve(pages, extract(text))
            injected = tuple(s for s in resolved if not suppressed(by_slug[s], prior))
            win_resolved: dict[str, str] = {}
            for t in [*window[-4:], text]:
                for s, arm in resolve(pages, extract(t)).items():
                    win_resolved.setdefault(s, arm)
            win_inj = tuple(s for s in win_resolved if s not in window_injected_so_far)
            window_injected_so_far.update(win_inj)
            traces.append(TurnTrace(turn["turn_id"], resolved, injected, win_inj))
            prior += "\n" + text
            if injected:
                prior += "\n" + "\n".join(f"- **{by_slug[s].title}** → `{s}`" for s in injected)
        else:
            prior += "\n" + text
        window.append(text)
    return traces
