"""The trust gate of one proactive call (gbrain 0.60; trust spec §3.5).

Resolution ranks pages as before; the gate then decides, before prior-context
suppression and the budget, which of them may be injected and with which label,
so a withheld page never takes a pointer's place.  What activation control withheld
is only counted, never shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import psycopg

from brainbench.brain import eligibility
from brainbench.brain.eligibility import ReadPolicy
from brainbench.models.trust import stored_tier
from brainbench.reflex.labels import Trust, trust_of


@dataclass
class TrustGate:
    policy: ReadPolicy
    # Slugs activation control withheld this call (a page withheld by two arms counts once).
    withheld: set[str] = field(default_factory=set)

    @classmethod
    def read(cls, conn: psycopg.Connection) -> TrustGate:
        return cls(eligibility.read_policy(conn))

    def admit(self, conn: psycopg.Connection, source_id: str, slugs: Sequence[str]) -> dict[str, Trust]:
        """The labels of the pages among ``slugs`` a proactive surface may inject.

        A quarantined page still gets a pointer, as gbrain 0.60's resolver gives it one: it is
        external text, so its synopsis arrives wrapped as data; what quarantine hides is the
        page's chunks and projections (facts), which no pointer carries."""
        out: dict[str, Trust] = {}
        for slug, row in eligibility.page_trust(conn, source_id, list(dict.fromkeys(slugs))).items():
            if self.policy.hide_external and stored_tier(row.tier) == "external_untrusted":
                continue
            if row.flagged and self.policy.suppress_flagged:
                self.withheld.add(slug)
                continue
            out[slug] = trust_of(row.tier, row.write_origin, row.flagged)
        return out

    def admit_fact(self, row: eligibility.RowTrust) -> Trust | None:
        """A hot fact's label, or None when activation control withholds it (counted)."""
        if row.flagged and self.policy.suppress_flagged:
            return None
        return trust_of(row.tier, row.write_origin, row.flagged)

    def notice(self, extra: int = 0) -> str:
        """The count for stderr, never the content (the injected text carries no trace of it)."""
        n = len(self.withheld) + extra
        if not n:
            return ""
        what = "memory was" if n == 1 else "memories were"
        return (f"{n} unconfirmed agent-written {what} withheld from this turn's context "
                "(trust.agent_activation=suppress); review: gbrain trust review\n")
