"""openclaw seam (production): the legacy window-1 reflex path of gbrain's context engine.

Prior context arrives the way OpenClaw's ``before_prompt_build`` gives it: the
earlier messages (and earlier injected context) in ``messages``.
"""

from __future__ import annotations

from collections.abc import Mapping

from brainbench.hooks.brain_access import with_brain
from brainbench.hooks.program import HookResult, context_output, main
from brainbench.reflex.candidates import extract_candidates
from brainbench.reflex.render import render_pointer_block
from brainbench.reflex.resolve import resolve_pointers

MAX_POINTERS = 3


def prior_from_messages(messages: object) -> str:
    """Earlier turn texts and injected blocks, each preceded by a newline (spec §5.2)."""
    if not isinstance(messages, list):
        return ""
    parts = []
    for m in messages:
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            parts.append("\n" + m["content"])
    return "".join(parts)


def pointer_block(env: Mapping[str, str], prompt: str, prior: str, max_pointers: int) -> str:
    candidates = extract_candidates(prompt)
    if not candidates:
        return ""  # nothing name-like: stay silent without touching the brain
    pointers = with_brain(
        env,
        lambda conn, source: resolve_pointers(
            conn, source, candidates, max_pointers=max_pointers, prior_context=prior, suppression="slug-and-title"
        ),
    )
    return render_pointer_block(pointers) if pointers else ""


def handle(message: dict[str, object], env: Mapping[str, str]) -> HookResult:
    if message.get("hook_event_name") != "UserPromptSubmit":
        return HookResult()
    prompt = message.get("prompt")
    if not isinstance(prompt, str):
        return HookResult()
    block = pointer_block(env, prompt, prior_from_messages(message.get("messages")), MAX_POINTERS)
    return HookResult(0, context_output("UserPromptSubmit", block))


if __name__ == "__main__":
    main(handle)
