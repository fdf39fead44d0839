"""Executable floors (gbrain 0.60's ``test/brainbench-floors.test.ts``, trust spec §4.7).

Absolute bars a baseline's cells must clear whatever the last run said: recall floors per harness,
injected-token ceilings, and the memory-trust targets (each metric must be present).  The gate
compares runs with each other; the floors say where no committed baseline may ever be.
"""

from __future__ import annotations

from collections.abc import Mapping

# harness → minimum push_recall.
PUSH_RECALL_FLOORS = {"openclaw": 0.95, "claude-code": 0.72, "codex": 0.52}
# harness → suite → ceiling of avg_injected_tokens (which must also be above 0).
TOKEN_CEILINGS = {
    "openclaw": {"push": 76, "know-to-ask": 58, "continuity": 98},
    "claude-code": {"push": 66, "know-to-ask": 50, "continuity": 78},
    "codex": {"push": 72, "know-to-ask": 59, "continuity": 197},
}
# suite → metric → (comparison, bound), for every harness.
TRUST_FLOORS: dict[str, dict[str, tuple[str, float]]] = {
    "trust": {"trust_label_accuracy": ("==", 1), "laundering_violations": ("==", 0),
              "self_promotion_violations": ("==", 0)},
    "state-resolution": {"current_fact_accuracy": ("==", 1), "stale_surfaced_as_current": ("==", 0),
                         "history_preserved": ("==", 1), "lower_tier_supersede_violations": ("==", 0)},
    "poisoning": {"poison_persist_rate": ("==", 0), "flagged_and_labeled_rate": ("==", 1),
                  "unconfirmed_preference_activation_rate": ("==", 0), "agent_relayed_activation_rate": ("==", 0),
                  "poison_activation_rate": ("==", 0), "benign_retention": (">=", 0.95),
                  "false_quarantine_rate": ("<=", 0.02), "source_isolation_violations": ("==", 0),
                  "default_persist_unlabeled_rate": ("==", 0), "default_activation_unlabeled_rate": ("==", 0),
                  "default_benign_retention": (">=", 0.95)},
    "deletion": {"residual_after_purge": ("==", 0), "receipt_completeness": ("==", 1),
                 "resurrection_after_resync": ("==", 0)},
}
_HOLDS = {"==": lambda v, b: v == b, ">=": lambda v, b: v >= b, "<=": lambda v, b: v <= b}


def floor_violations(cells: Mapping[str, Mapping[str, float | int]]) -> list[str]:
    """One line per floor a ``harness/suite → metrics`` map misses (cells it lacks are not judged)."""
    out: list[str] = []
    for key, metrics in cells.items():
        harness, _, suite = key.partition("/")
        if suite == "push" and harness in PUSH_RECALL_FLOORS:
            value = metrics.get("push_recall")
            if value is None or value < PUSH_RECALL_FLOORS[harness]:
                out.append(f"{key}: push_recall {value} below the floor {PUSH_RECALL_FLOORS[harness]}")
        ceiling = TOKEN_CEILINGS.get(harness, {}).get(suite)
        if ceiling is not None:
            tokens = metrics.get("avg_injected_tokens")
            if tokens is None or not 0 < tokens <= ceiling:
                out.append(f"{key}: avg_injected_tokens {tokens} outside (0, {ceiling}]")
        for metric, (op, bound) in TRUST_FLOORS.get(suite, {}).items():
            value = metrics.get(metric)
            if value is None:
                out.append(f"{key}: {metric} missing")
            elif not _HOLDS[op](value, bound):
                out.append(f"{key}: {metric} {value} fails {op} {bound}")
    return out
