"""Alias normalization (spec §2.5): how a name is keyed in ``page_aliases``."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from brainbench.jscase import js_lower
from brainbench.jsstring import WS, trim

_SPACES = re.compile(WS + "+")  # JS \s (NBSP and U+FEFF included, U+0085 not)
_LEAD = re.compile(r"^[\"'`\[(]+")
_TRAIL = re.compile(r"[\"'`\])]+\Z")


def normalize_alias(text: str) -> str:
    """NFKC, lowercase, fold whitespace runs (NBSP included), trim, strip quote/bracket runs."""
    out = js_lower(unicodedata.normalize("NFKC", text))
    out = trim(_SPACES.sub(" ", out))
    out = _LEAD.sub("", out)
    out = _TRAIL.sub("", out)
    return trim(out)


def normalize_alias_list(value: Any) -> list[str]:
    """Frontmatter ``aliases`` → ordered unique normalized aliases (non-strings ignored)."""
    if isinstance(value, str):
        raw = value.split(",") if "," in value else [value]
    elif isinstance(value, list):
        raw = [v for v in value if isinstance(v, str)]
    else:
        return []
    out: list[str] = []
    for item in raw:
        norm = normalize_alias(item)
        if norm and norm not in out:
            out.append(norm)
    return out
