"""The write gate (trust spec §3.4): which writes the detector judges, and what its verdict does.

It judges by the write's effective tier: external writes unless ``write_gate.external_mode``
is ``off``, agent and unknown writes unless ``write_gate.agent_mode`` is ``off``; never the
owner's tiers.  A hit on an external write takes the external mode (quarantine, flag or
reject); a hit on an agent write is flagged.  A flagged row is stored as usual plus a
receipt; a quarantined page is stored hidden (a ``quarantine`` frontmatter marker, no
chunks), a quarantined fact is held instead of stored.  Receipts name rules, never text:
they must survive a purge without keeping what it removed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

from brainbench.memory.reference import detector, mutations
from brainbench.memory.reference.context import Store
from brainbench.models.memory import GateVerdict
from brainbench.models.trust import TrustTier

Verdict = Literal["allow", "flag", "quarantine", "reject"]
_AGENT_TIERS = ("agent_written", "unknown")


@dataclass(frozen=True)
class Decision:
    verdict: Verdict
    hits: list[detector.Hit] = field(default_factory=list)

    @property
    def families(self) -> list[str]:
        return detector.families(self.hits)


def _mode(store: Store, tier: TrustTier) -> str | None:
    if tier == "external_untrusted":
        mode = "off" if mutations.active("external_gate_off") else store.setting("write_gate.external_mode")
        mode = "reject" if mutations.active("external_gate_reject") else mode
        return mode if mode in ("quarantine", "flag", "reject") else (None if mode == "off" else "flag")
    if tier in _AGENT_TIERS:
        mode = "off" if mutations.active("agent_gate_off") else store.setting("write_gate.agent_mode")
        return None if mode == "off" else "flag"
    return None


def judge(store: Store, tier: TrustTier, texts: Iterable[str]) -> Decision:
    mode = _mode(store, tier)
    if mode is None:
        return Decision("allow")
    try:
        hits = ([detector.Hit("standing_instruction", "everything")] if mutations.active("detector_flags_everything")
                else detector.scan(texts))
    except Exception:
        return Decision("quarantine" if tier == "external_untrusted" else "allow",
                        [detector.Hit("standing_instruction", "detector_error")])
    if not hits:
        return Decision("allow")
    return Decision(mode if tier == "external_untrusted" else "flag", hits)  # type: ignore[arg-type]


def content_hash(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


def record(store: Store, table: str, target_id: int, tier: TrustTier, decision: Decision, digest: str) -> str:
    """Write the receipt of a flag or quarantine; returns its ref (``wgr<id>``)."""
    reasons = [{"family": h.family, "rule": h.rule} for h in decision.hits]
    row = store.conn.execute(
        "INSERT INTO write_gate_receipts (target_table, target_id, source_id, content_hash, tier, detector_version,"
        " verdict, reason_families, reasons) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) RETURNING id",
        (table, str(target_id), store.ns.source, digest, tier, detector.DETECTOR_VERSION, decision.verdict,
         decision.families, json.dumps(reasons))).fetchone()
    assert row is not None
    return f"wgr{row[0]}"


def verdict_of(decision: Decision, receipt_ref: str | None = None, verdict: str | None = None) -> GateVerdict | None:
    if decision.verdict == "allow":
        return None
    return GateVerdict(verdict=verdict or decision.verdict, reason_families=decision.families,  # type: ignore[arg-type]
                       receipt_ref=receipt_ref)
