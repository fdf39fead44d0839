"""The vocabulary of the memory-trust suites (gbrain 0.60): tiers, actors, operations, checks.

Every name here is a value that appears in fixtures, gold, results or a memory system's
answers, spelled exactly as gbrain spells it (docs: shared reference, brainbench-trust-spec §1, §3.1).
"""

from __future__ import annotations

from typing import Literal

TrustTier = Literal["user_confirmed", "operator_curated", "tool_observed", "agent_written", "unknown",
                    "external_untrusted"]
# Highest first; the rank is what every comparison of two tiers uses.
TRUST_TIERS: tuple[TrustTier, ...] = ("user_confirmed", "operator_curated", "tool_observed", "agent_written",
                                      "unknown", "external_untrusted")
TIER_RANK: dict[TrustTier, int] = {tier: 6 - i for i, tier in enumerate(TRUST_TIERS)}
# The fixed user-facing words of each tier.
TIER_LABEL: dict[TrustTier, str] = {
    "user_confirmed": "confirmed by you",
    "operator_curated": "your notes",
    "tool_observed": "tool data",
    "agent_written": "written by an agent",
    "unknown": "unverified origin",
    "external_untrusted": "external, untrusted",
}
OWNER_TIER_FLOOR: TrustTier = "operator_curated"
USER_SAID_LABEL = "you told your agent this (not yet confirmed)"

TrustActor = Literal["owner", "local_agent", "remote_agent", "connector", "raw"]
TRUST_ACTORS: tuple[TrustActor, ...] = ("owner", "local_agent", "remote_agent", "connector", "raw")
TrustOp = Literal["write_file", "sync", "put_page", "capture", "remember", "forget", "confirm", "purge",
                  "raise_tier"]
TRUST_OPS: tuple[TrustOp, ...] = ("write_file", "sync", "put_page", "capture", "remember", "forget", "confirm",
                                  "purge", "raise_tier")
# Who may do what: a fixture that asks for anything else is refused by the loader.
ACTOR_OPS: dict[TrustActor, tuple[TrustOp, ...]] = {
    "owner": ("write_file", "sync", "confirm", "purge"),
    "local_agent": ("put_page", "remember", "confirm"),
    "remote_agent": ("put_page", "capture", "remember", "forget", "confirm", "purge"),
    "connector": ("capture",),
    "raw": ("raise_tier",),
}
# Fields each operation needs, non-empty.
OP_REQUIRED_FIELDS: dict[TrustOp, tuple[str, ...]] = {
    "write_file": ("slug", "content"),
    "put_page": ("slug", "content"),
    "capture": ("slug", "content"),
    "remember": ("fact",),
    "forget": ("target",),
    "confirm": ("target",),
    "purge": ("target",),
    "raise_tier": ("target",),
    "sync": (),
}
ContentOrigin = Literal["user_said", "tool_output", "inferred"]
TrustFactKind = Literal["fact", "preference", "commitment", "event", "belief"]

TrustCheck = Literal["tier", "max_tier", "refused", "current", "stale", "history", "guarded", "poison", "benign",
                     "purged"]
PoisonArm = Literal["external", "agent_relayed"]

TrustSuite = Literal["trust", "state-resolution", "poisoning", "deletion"]
TRUST_SUITES: tuple[TrustSuite, ...] = ("trust", "state-resolution", "poisoning", "deletion")
SUITE_CHECKS: dict[TrustSuite, tuple[TrustCheck, ...]] = {
    "trust": ("tier", "max_tier", "refused"),
    "state-resolution": ("current", "stale", "history", "guarded"),
    "poisoning": ("poison", "benign"),
    "deletion": ("purged",),
}
# An outcome with one of these codes means the step never reached the memory system's rules.
UNEXERCISED_CODES = frozenset({"unsupported", "bench_target_missing", "not_run"})


def tier_rank(tier: TrustTier | None) -> int:
    """0 for a row that does not exist, so any stored tier outranks it."""
    return TIER_RANK[tier] if tier is not None else 0


def stored_tier(value: object) -> TrustTier:
    """A stored value that names no tier (NULL included) reads as ``unknown``."""
    return value if value in TIER_RANK else "unknown"  # type: ignore[return-value]
