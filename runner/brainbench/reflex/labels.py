"""Trust labels on injected text (gbrain 0.60; trust spec §3.9).

Every page or fact a proactive surface injects carries a compact label
``[<words> · <origin>]`` before its text, except below ``unknown``: external,
untrusted text is not labeled but wrapped as data in ``<external-data …>``, so
the model reads it as something to look at, never an instruction to follow.
The poisoning scorer (§4.4) parses exactly these strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from brainbench.models import bounded_json
from brainbench.models.trust import TIER_LABEL, USER_SAID_LABEL, TrustTier, stored_tier, tier_rank

ORIGIN_MAX = 40
LEGACY_ORIGIN = "legacy"
USER_SAID = "user_said"
ENVELOPE_TAG = "external-data"
# The origin is printed, so only a machine-safe alphabet survives (an attacker may choose the text).
_UNSAFE_ORIGIN = re.compile(r"[^A-Za-z0-9:_./-]")
# A tag inside the wrapped text must not close (or open) an envelope: any case, as the scorer counts.
_TAG = re.compile(r"<(/?external-data)", re.IGNORECASE)


@dataclass(frozen=True)
class Trust:
    """What a text label says about one stored row."""

    tier: TrustTier
    origin: str
    # Flagged by the write gate in an activation family and not confirmed by the owner.
    unconfirmed: bool = False


def _origin_object(value: object) -> dict[str, object] | None:
    if isinstance(value, str):
        try:
            return _origin_object(bounded_json.loads(value))
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def short_origin(write_origin: object) -> str:
    """The row's write channel in the safe alphabet, at most 40 characters; ``legacy`` without one."""
    channel = (_origin_object(write_origin) or {}).get("channel")
    if not isinstance(channel, str):
        return LEGACY_ORIGIN
    return _UNSAFE_ORIGIN.sub("", channel)[:ORIGIN_MAX] or LEGACY_ORIGIN


def trust_of(tier: object, write_origin: object, flagged: bool) -> Trust:
    """The label fields of a row from its stored columns; the user's own words relayed by an
    agent say so in their origin (``<channel>:user_said``)."""
    stored = stored_tier(tier)
    origin = short_origin(write_origin)
    if stored == "agent_written" and (_origin_object(write_origin) or {}).get("content_origin") == USER_SAID:
        origin = f"{origin}:{USER_SAID}"
    return Trust(stored, origin, flagged)


def label_words(trust: Trust) -> str:
    """"unconfirmed, …" for a flagged row (never softened), the user-said words, else the tier's."""
    if trust.unconfirmed:
        return "unconfirmed, " + ("agent-written" if trust.tier == "agent_written" else TIER_LABEL[trust.tier])
    if trust.tier == "agent_written" and trust.origin.endswith(":" + USER_SAID):
        return USER_SAID_LABEL
    return TIER_LABEL[trust.tier]


def compact_label(trust: Trust) -> str:
    return f"[{label_words(trust)} · {trust.origin}]"


def needs_envelope(tier: TrustTier) -> bool:
    """Below ``unknown`` (external, untrusted) text is wrapped instead of labeled."""
    return tier_rank(tier) < tier_rank("unknown")


def escape_envelope(text: str) -> str:
    return _TAG.sub(r"&lt;\1", text)


def render_inline(text: str, trust: Trust) -> str:
    """One list item's text with its trust: ``[label] text``, or the text inline in a data envelope."""
    if not needs_envelope(trust.tier):
        return f"{compact_label(trust)} {text}" if text else compact_label(trust)
    return (f'<{ENVELOPE_TAG} trust="{trust.tier}" origin="{trust.origin}">'
            f"{escape_envelope(text)}</{ENVELOPE_TAG}>")
