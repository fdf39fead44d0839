"""Spec §1.3–1.4 validation rules, restated for the generator tests.

The lead's loader is the canonical validator; this restatement lets the generator be
tested on its own and pins the rules the generated files must satisfy exactly.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

FIXTURE_KEYS = {"schema_version", "fixture_id", "suites", "category", "holdout", "sources", "active_source",
                "seed_pages", "seed_facts", "turns", "continuity"}
SUITES = {"know-to-ask", "push", "write-back", "continuity"}


def fixture_errors(fx: Any) -> list[str]:
    errs: list[str] = []
    if not isinstance(fx, dict):
        return ["not an object"]
    extra = set(fx) - FIXTURE_KEYS
    if extra:
        errs.append(f"unknown keys {sorted(extra)}")
    if fx.get("schema_version") != 1 or isinstance(fx.get("schema_version"), bool):
        errs.append("schema_version must be 1")
    if not isinstance(fx.get("fixture_id"), str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]*", fx["fixture_id"]):
        errs.append("bad fixture_id")
    suites = fx.get("suites")
    if not isinstance(suites, list) or not suites or any(s not in SUITES for s in suites):
        errs.append("bad suites")
        suites = []
    if "holdout" in fx and not isinstance(fx["holdout"], bool):
        errs.append("holdout must be boolean")
    for page in fx.get("seed_pages", []):
        if set(page) - {"slug", "content", "source_id"}:
            errs.append("seed page keys")
        if not isinstance(page.get("slug"), str) or not page["slug"]:
            errs.append("seed page slug")
        if not isinstance(page.get("content"), str) or not page["content"]:
            errs.append("seed page content")
    turns = fx.get("turns")
    if not isinstance(turns, list) or not turns:
        return [*errs, "turns must be non-empty"]
    ids: set[int] = set()
    needs_ts = "write-back" in suites or (fx.get("continuity") or {}).get("pair_role") == "writer"
    for t in turns:
        if set(t) - {"turn_id", "role", "text", "ts"}:
            errs.append(f"turn keys {sorted(t)}")
        if not isinstance(t.get("turn_id"), int) or isinstance(t.get("turn_id"), bool):
            errs.append("turn_id must be an integer")
        elif t["turn_id"] in ids:
            errs.append("duplicate turn_id")
        else:
            ids.add(t["turn_id"])
        if t.get("role") not in ("user", "assistant"):
            errs.append("bad role")
        if not isinstance(t.get("text"), str) or not t["text"]:
            errs.append("empty text")
        if "ts" in t:
            try:
                datetime.fromisoformat(t["ts"].replace("Z", "+00:00"))
            except (ValueError, AttributeError):
                errs.append(f"unparsable ts {t['ts']!r}")
        elif needs_ts:
            errs.append("write-back fixture requires ts on every turn")
    cont = fx.get("continuity")
    if cont is not None and (set(cont) - {"pair_id", "pair_role"} or not cont.get("pair_id")
                             or cont.get("pair_role") not in ("writer", "reader")):
        errs.append("bad continuity block")
    return errs


def gold_errors(fx: dict[str, Any], gold: Any) -> list[str]:
    errs: list[str] = []
    if not isinstance(gold, dict):
        return ["gold not an object"]
    if set(gold) - {"fixture_id", "turns", "continuity"}:
        errs.append("gold keys")
    if gold.get("fixture_id") != fx["fixture_id"]:
        errs.append("fixture_id mismatch")
    roles = {str(t["turn_id"]): t["role"] for t in fx["turns"]}
    retrieval = bool({"know-to-ask", "push"} & set(fx["suites"]))
    for key, tg in gold.get("turns", {}).items():
        if key not in roles:
            errs.append(f"gold turn {key}: no matching fixture turn")
            continue
        if set(tg) - {"should_retrieve", "gold_slugs", "acceptable_slugs", "gold_facts"}:
            errs.append(f"turn {key} gold keys")
        if not isinstance(tg.get("should_retrieve"), bool):
            errs.append(f"turn {key}: should_retrieve must be boolean")
        if roles[key] == "assistant" and (tg.get("should_retrieve") or "gold_slugs" in tg
                                          or "acceptable_slugs" in tg):
            errs.append(f"turn {key}: retrieval gold on an assistant turn")
        if retrieval and tg.get("should_retrieve") and not tg.get("gold_slugs"):
            errs.append(f"turn {key}: gold_slugs must be non-empty")
        for k in ("gold_slugs", "acceptable_slugs"):
            if k in tg and (not isinstance(tg[k], list) or not all(isinstance(s, str) for s in tg[k])):
                errs.append(f"turn {key}: {k} must be a string array")
        for gf in tg.get("gold_facts", []):
            if set(gf) - {"gist", "fact", "entity_slug", "match_keywords", "kind"}:
                errs.append("gold fact keys")
            if not (isinstance(gf.get("gist"), str) and gf["gist"] and isinstance(gf.get("fact"), str)
                    and gf["fact"]):
                errs.append("gold fact gist/fact")
            if "entity_slug" not in gf or not (gf["entity_slug"] is None or isinstance(gf["entity_slug"], str)):
                errs.append("gold fact entity_slug must be string or null")
            kws = gf.get("match_keywords")
            if not isinstance(kws, list) or not kws or not all(isinstance(k, str) for k in kws):
                errs.append("gold fact match_keywords must be a non-empty string array")
            if gf.get("kind") not in ("event", "preference", "commitment", "belief", "fact"):
                errs.append("gold fact kind")
    cont = fx.get("continuity")
    gc = gold.get("continuity")
    if cont and cont["pair_role"] == "reader" and gc is None:
        errs.append("reader requires gold.continuity")
    if gc is not None:
        if not cont:
            errs.append("gold continuity on a non-continuity fixture")
        elif gc.get("pair_id") != cont["pair_id"]:
            errs.append("gold continuity pair_id mismatch")
        if not gc.get("decisions"):
            errs.append("decisions must be non-empty")
    return errs
