"""Deliberate breakages of the reference memory system, for the mutation tests only.

Each name switches off (or perverts) one protection, so a test can show that the metric
guarding it breaches and the gate exits 1.  The switch is this module's state and nothing
else: no flag, option or environment variable reaches it, so no run from the command line
can be mutated; a test sets it in-process around an in-process run (:func:`mutated`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

MUTATIONS = {
    "agent_writes_owner_tier": "agent writes are stamped operator_curated (channel stamping off)",
    "agent_holds_confirm_scope": "a remote agent's connection holds the confirmation scope",
    "ignore_replaces": "a correction's `replaces` is dropped (no supersession)",
    "lower_tier_supersedes": "a less trusted writer supersedes a more trusted fact (no guard)",
    "remote_forget_unguarded": "a remote agent may expire any fact",
    "external_gate_off": "write_gate.external_mode = off",
    "external_gate_reject": "write_gate.external_mode = reject (a tripped external write is refused)",
    "agent_gate_off": "write_gate.agent_mode = off",
    "activation_allow": "trust.agent_activation = allow on the protections brain",
    "detector_flags_everything": "the detector trips on every text",
    "purge_skips_chunks": "purge leaves the page chunks alone",
    "purge_skips_journal": "purge leaves the request journal alone",
    "drop_tombstone": "the purge's tombstone is deleted after the purge",
    "tier_trigger_dropped": "the tier trigger is dropped (no database rule)",
    "insert_owner_tier": "a trigger stamps every insert operator_curated",
}
_active: frozenset[str] = frozenset()


def active(name: str) -> bool:
    return name in _active


@contextlib.contextmanager
def mutated(*names: str) -> Iterator[None]:
    global _active
    unknown = [n for n in names if n not in MUTATIONS]
    if unknown:
        raise ValueError(f"unknown mutation(s): {', '.join(unknown)}")
    previous = _active
    _active = frozenset(names)
    try:
        yield
    finally:
        _active = previous
