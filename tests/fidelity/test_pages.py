"""Rules 1–4 and 6 of issue 30, page by page: what gbrain's importFromContent stored for each
case (tests/data/fidelity30, see its PROVENANCE.md) against what our parser makes of it.

One case per row; every field that reaches the resolver or the hash is compared:
import status, title, type, compiled truth, timeline, content_hash, the stored frontmatter,
the alias rows, the synopsis and the SQL ``lower(title)``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from brainbench.brain.aliases import normalize_alias_list
from brainbench.brain.markdown import PageParseError, parse_page
from brainbench.brain.store import PageRow, jsonb_problem
from brainbench.corpus.slugs import SlugError, validate_slug
from brainbench.jscase import sql_lower
from brainbench.jsstring import without_lone_surrogates
from brainbench.reflex.resolve import synopsis

from .conftest import paired

PAGES = paired("pages")
# Markers gbrain's content-sanity gate writes into the stored frontmatter (never hashed).
_GATE_KEYS = ("quarantine", "content_flag", "embed_skip")


def _stored(front: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in front.items() if k not in _GATE_KEYS}


@pytest.mark.parametrize(("case", "want"), PAGES, ids=[c["id"] for c, _ in PAGES])
def test_page_is_read_as_gbrain_reads_it(case: dict[str, Any], want: dict[str, Any]) -> None:
    try:
        slug = validate_slug(case["slug"])
        page = parse_page(slug, case["content"])
    except (SlugError, PageParseError) as exc:
        assert want["status"] in ("error", "skipped", "throw"), f"we refuse ({exc}); gbrain: {want['status']}"
        return
    if want["status"] == "throw":
        # gbrain's database refused the row (jsonb, or a NUL in a text column); import_page refuses it too.
        text_nul = any("\0" in v for v in (page.title, page.type, page.compiled_truth, page.timeline))
        assert text_nul or jsonb_problem(page.frontmatter) is not None
        return
    assert want["status"] == "imported", f"gbrain refused ({want}); we accept"
    assert jsonb_problem(page.frontmatter) is None
    # Text reaches the database as UTF-8: a lone surrogate half is stored as U+FFFD, as over gbrain's wire.
    got = {
        "title": without_lone_surrogates(page.title), "type": page.type, "compiled_truth": page.compiled_truth,
        "timeline": page.timeline,
        "content_hash": page.content_hash, "frontmatter": _stored(json.loads(page.stored_json)),
        "aliases": sorted(normalize_alias_list(page.frontmatter.get("aliases"))),
        "lower_title": sql_lower(without_lone_surrogates(page.title)),
    }
    expected = {k: want[k] for k in got}
    expected["frontmatter"] = _stored(want["frontmatter"])
    assert got == expected
    row = PageRow(slug, "default", page.type, without_lone_surrogates(page.title), page.compiled_truth,
                  json.loads(page.stored_json),
                  page.content_hash)
    assert synopsis(row) == want["synopsis"]
