"""Which tier a write gets (trust spec §3.1, §3.2): the channel's tier, lowered by what the write declares.

Lowering signals only ever lower: a page that claims ``trust_tier: user_confirmed`` in its
frontmatter gets nothing from it, because no declaration can climb above the channel.  The
tier is then handed to the database in transaction-local settings (:func:`writer`), where
the trigger of migration 004 stamps every page and fact row with it.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import psycopg

from brainbench.models.trust import TIER_RANK, TrustTier

# The channel a write arrives through, and that channel's tier.
CHANNEL_TIER: dict[str, TrustTier] = {
    "mcp": "agent_written",  # a remote agent's connection
    "cli": "agent_written",  # a local agent with a shell is indistinguishable from the human
    "owner_sync": "operator_curated",  # the owner's own store, imported
    "connector": "external_untrusted",  # a third-party feed
}
ORIGIN_TIER: dict[str, TrustTier] = {
    "tool_output": "external_untrusted",
    "user_said": "agent_written",
    "inferred": "agent_written",
}
FACT_KINDS = ("fact", "preference", "commitment", "event", "belief")
_EXTERNAL_VIA = {"webhook", "file-watcher", "inbox-folder", "cron-scheduler", "ingest_capture"}
_AGENT_VIA = {"put_page", "capture-cli", "capture-mcp", "capture"}
_CLIP_KEYS = ("clipped_at", "clipper")


class InvalidParams(ValueError):
    """A write declared something no tier answers to (an unknown content origin or fact kind)."""


def lowest(*tiers: TrustTier) -> TrustTier:
    return min(tiers, key=lambda t: TIER_RANK[t])


def origin_tier(content_origin: str | None) -> TrustTier | None:
    if content_origin is None:
        return None
    if content_origin not in ORIGIN_TIER:
        raise InvalidParams(f"invalid_params: content_origin {content_origin!r} is not one of "
                            f"{', '.join(ORIGIN_TIER)}")
    return ORIGIN_TIER[content_origin]


def frontmatter_caps(front: Mapping[str, Any]) -> list[TrustTier]:
    """The tiers a page's own frontmatter lowers it to (each can only lower)."""
    caps: list[TrustTier] = []
    marker = front.get("trust_tier")
    if isinstance(marker, str) and marker in TIER_RANK:
        caps.append(marker)  # type: ignore[arg-type]
    for key in ("source_kind", "ingested_via", "captured_via"):
        value = front.get(key)
        if not isinstance(value, str):
            continue
        if value in _EXTERNAL_VIA or value.startswith("connector:") or value == "clipper":
            caps.append("external_untrusted")
        elif value.startswith("mcp:") or value in _AGENT_VIA:
            caps.append("agent_written")
    if isinstance(front.get("source_url"), str) and (any(k in front for k in _CLIP_KEYS)
                                                      or front.get("type") == "clipping"):
        caps.append("external_untrusted")
    if front.get("provenance") in ("auto-extracted", "dream_generated"):
        caps.append("agent_written")
    return caps


def write_tier(channel: str, content_origin: str | None = None, front: Mapping[str, Any] | None = None) -> TrustTier:
    """The effective tier of one write: its channel's, lowered by origin and frontmatter."""
    tiers = [CHANNEL_TIER[channel]]
    declared = origin_tier(content_origin)
    if declared is not None:
        tiers.append(declared)
    tiers += frontmatter_caps(front or {})
    return lowest(*tiers)


# What an origin records of the channel, in gbrain 0.60's vocabulary, so that a label reads the
# same (and weighs the same in injected tokens) in both systems: an agent's verb under its
# transport (``mcp:remember``, ``cli:put_page``), the owner's sync import, a connector's import.
_ORIGIN_CHANNEL = {"owner_sync": "managed_sync_import", "connector": "connector:connector_v2_import"}


def origin_channel(channel: str, op: str | None = None) -> str:
    if channel in _ORIGIN_CHANNEL:
        return _ORIGIN_CHANNEL[channel]
    if not op:
        raise ValueError(f"an agent write through {channel!r} names its verb")
    return f"{channel}:{op}"


def write_origin(channel: str, actor: str, content_origin: str | None = None, *,
                 op: str | None = None) -> dict[str, Any]:
    origin: dict[str, Any] = {"channel": origin_channel(channel, op), "actor": actor}
    if content_origin is not None:
        origin["content_origin"] = content_origin
    return origin


_ORIGIN_CHARS = re.compile(r"[^A-Za-z0-9:_./-]")


def origin_label(origin: Mapping[str, Any] | None, tier: TrustTier) -> str:
    """The origin shown beside a tier: the write's channel, ``<channel>:user_said`` for what a user
    told an agent, ``legacy`` for rows written before tiers existed."""
    channel = origin.get("channel") if isinstance(origin, Mapping) else None
    if not isinstance(channel, str) or not channel:
        return "legacy"
    text = _ORIGIN_CHARS.sub("", channel)[:40] or "legacy"
    if tier == "agent_written" and origin.get("content_origin") == "user_said":  # type: ignore[union-attr]
        text = f"{text}:user_said"
    return text


@contextlib.contextmanager
def writer(conn: psycopg.Connection, tier: TrustTier | None, origin: Mapping[str, Any] | None = None, *,
           promotion: TrustTier | None = None, keep: Sequence[str] = ()) -> Iterator[None]:
    """One transaction in which every page and fact row written is stamped as ``tier``'s writer."""
    with conn.transaction():
        conn.execute(
            "SELECT set_config('brainbench.write_tier', %s, true), set_config('brainbench.write_origin', %s, true),"
            " set_config('brainbench.write_promotion', %s, true), set_config('brainbench.write_keep', %s, true)",
            (tier or "", json.dumps(dict(origin)) if origin is not None else "", promotion or "", ",".join(keep)))
        yield
