"""Alias normalization (spec §2.5): how a name is keyed in ``page_aliases``."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_SPACES = re.compile(r"\s+")
_LEAD = re.compile(r"^[\"'`\[(]+")
_TRAIL = re.compile(r"[\"'`\])]+$")


def normalize_alias(text: str) -> str:
    """NFKC, lowercase, fold whitespace runs (NBSP included), trim, strip quote/bracket runs."""
    out = unicodedata.normalize("NFKC", text).lower()
    out = _SPACES.sub(" ", out).strip()
    out = _LEAD.sub("", out)
    out = _TRAIL.sub("", out)
    return out.strip()


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
