"""Page slugs as gbrain stores them (its ``validateSlug`` on import; issue 13 rule 4).

A seed page's slug is lower-cased, or refused: a refused slug is a seed failure
for its fixture (reported, the fixture skipped, exit 2), never a corpus error,
because gbrain loads such a corpus and fails at seeding.  Gold slugs and fact
subjects are read as written (issue 30 rule 11): gbrain never normalises them, so a
gold slug with capitals never matches the page seeding stored lower-cased.
"""

from __future__ import annotations

import re

from brainbench.jscase import js_lower

# C0, DEL and C1: Unicode's Cc.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# Bidi embeddings/overrides (LRE RLE PDF LRO RLO) and isolates (LRI RLI FSI PDI).
_BIDI = re.compile(r"[\u202a-\u202e\u2066-\u2069]")
_ENCODED_SEPARATOR = re.compile(r"%(?:2e|2f|5c)", re.IGNORECASE)


class SlugError(ValueError):
    """gbrain would refuse to store a page under this slug."""


def validate_slug(slug: str) -> str:
    """The slug gbrain stores for ``slug`` (lower-cased), or ``SlugError`` saying why not."""
    if not slug:
        raise SlugError("slug is empty")
    if slug.startswith("/"):
        raise SlugError("slug starts with '/'")
    for segment in slug.split("/"):
        if segment in ("", ".", ".."):
            raise SlugError(f"slug has an {'empty' if not segment else repr(segment)} path segment")
    if "\\" in slug:
        raise SlugError("slug contains a backslash")
    if _ENCODED_SEPARATOR.search(slug):
        raise SlugError("slug contains a percent-encoded '.', '/' or '\\' (%2e, %2f, %5c)")
    if m := _CONTROL.search(slug):
        raise SlugError(f"slug contains the control character U+{ord(m.group()):04X}")
    if m := _BIDI.search(slug):
        raise SlugError(f"slug contains the bidirectional override/isolate U+{ord(m.group()):04X}")
    return js_lower(slug)
