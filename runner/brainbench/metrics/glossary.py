"""One registry of metric explanations: the result's ``_meta.metric_glossary`` and docs/METRIC_GLOSSARY.md."""

from __future__ import annotations

from collections.abc import Iterable

METRIC_GLOSSARY: dict[str, str] = {
    "know_to_ask_failure_rate": (
        "Of the turns where memory should have spoken up on its own, the share where it stayed silent or "
        "pointed at the wrong page. This is the thesis failure mode: an agent that does not know to ask its "
        "memory. Lower is better."
    ),
    "false_fire_rate": (
        "Of the turns where memory should have stayed quiet (small talk, unknown names, things already shown), "
        "the share where it injected something anyway. Lower is better."
    ),
    "push_precision": (
        "Of all the pages memory pushed into the conversation, the share that were right (gold or acceptable). "
        "Higher is better."
    ),
    "push_recall": (
        "Of all the gold pages that should have been pushed, the share that actually were. Budget limits show "
        "up here. Higher is better."
    ),
    "write_back_fidelity": (
        "Of the facts stated in conversation, the share that ended up stored and can be found again by keyword "
        "with the right entity. Higher is better."
    ),
    "provenance_accuracy": (
        "Of the facts that survived, the share stamped with the right origin (source, session, conversation "
        "page). Higher is better."
    ),
    "continuity_rate": (
        "Of the decisions written in one session, the share that a later session could recall (by pointer or "
        "by stored fact). Higher is better."
    ),
    "source_isolation_violations": (
        "How many injected pages came from a source other than the active one. Must be 0: anything else is a "
        "data leak."
    ),
    "avg_injected_tokens": (
        "Average estimated tokens (characters / 4) memory added per replayed user turn, silent turns included. "
        "Cost, not quality: never gated."
    ),
    "extraction_recall": (
        "LLM mode only: of the gold facts, the share the model-based extractor stored findably. Higher is "
        "better."
    ),
    "extraction_precision": (
        "LLM mode only: of the facts the extractor stored, the share that match some gold fact. Higher is "
        "better."
    ),
}


def glossary_for(metric_names: Iterable[str]) -> dict[str, str]:
    return {name: METRIC_GLOSSARY[name] for name in sorted(set(metric_names)) if name in METRIC_GLOSSARY}


def glossary_markdown() -> str:
    lines = ["# BrainBench metric glossary", "",
             "Generated from `brainbench.metrics.glossary`; do not edit by hand.", ""]
    for name, text in METRIC_GLOSSARY.items():
        lines += [f"## `{name}`", "", text, ""]
    return "\n".join(lines)
