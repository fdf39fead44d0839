"""openclaw seam (production): gbrain's OpenClaw context engine, as its BrainBench adapter drives it.

Prior context arrives the way OpenClaw's ``before_prompt_build`` gives it: the
earlier messages (and earlier injected context) in ``messages``.

gbrain v0.46: the legacy window-1 reflex path (3 pointers for the prompt's own
mentions, suppressed against everything said and injected before).  gbrain 0.60
adds the volunteer arm (trust spec §5.2): the last 4 user turns drive the same
volunteer gate as the claude-code hook, and every page carries its trust label.
"""

from __future__ import annotations

from collections.abc import Mapping

from brainbench.hooks.brain_access import behaviour, with_brain
from brainbench.hooks.program import HookResult, context_output, main
from brainbench.reflex.candidates import extract_candidates, extract_candidates_from_window
from brainbench.reflex.render import render_pointer_block, render_reflex_addition
from brainbench.reflex.resolve import resolve_pointers
from brainbench.reflex.trust_gate import TrustGate
from brainbench.reflex.volunteer import volunteer

MAX_POINTERS = 3
WINDOW_TURNS = 4
VOLUNTEER_POOL = 10


def prior_from_messages(messages: object) -> str:
    """Earlier turn texts and injected blocks, each preceded by a newline (spec §5.2)."""
    if not isinstance(messages, list):
        return ""
    parts = []
    for m in messages:
        if isinstance(m, dict) and isinstance(m.get("content"), str):
            parts.append("\n" + m["content"])
    return "".join(parts)


def user_window(messages: object, prompt: str) -> list[tuple[str, str]]:
    """The last 4 user turns, this prompt included: the bench's window holds user turns only
    (gbrain's disclosed deviation from production's mixed-role window)."""
    earlier = [m["content"] for m in messages if isinstance(m, dict) and m.get("role") == "user"
               and isinstance(m.get("content"), str)] if isinstance(messages, list) else []
    return [("user", text) for text in [*earlier, prompt][-WINDOW_TURNS:]]


def pointer_block(env: Mapping[str, str], prompt: str, prior: str, max_pointers: int) -> HookResult:
    """Pointers for the prompt's own mentions (openclaw's first arm, codex's one fragment)."""
    candidates = extract_candidates(prompt)
    if not candidates:
        return HookResult()  # nothing name-like: stay silent without touching the brain
    labeled = behaviour(env) != "0.46"

    def work(conn, source) -> HookResult:  # type: ignore[no-untyped-def]
        gate = TrustGate.read(conn) if labeled else None
        pointers = resolve_pointers(conn, source, candidates, max_pointers=max_pointers, prior_context=prior,
                                    suppression="slug-and-title", gate=gate)
        return HookResult(0, render_pointer_block(pointers) if pointers else "", gate.notice() if gate else "")

    return with_brain(env, work)


def reflex_addition(env: Mapping[str, str], prompt: str, prior: str, window: list[tuple[str, str]]) -> HookResult:
    """gbrain 0.60: the pointer arm plus the volunteer arm over the user window."""
    candidates = extract_candidates(prompt)
    window_candidates = extract_candidates_from_window(window)
    if not candidates and not window_candidates:
        return HookResult()

    def work(conn, source) -> HookResult:  # type: ignore[no-untyped-def]
        gate = TrustGate.read(conn)
        pointers = resolve_pointers(conn, source, candidates, max_pointers=MAX_POINTERS, prior_context=prior,
                                    suppression="slug-and-title", gate=gate) if candidates else []
        pool = resolve_pointers(conn, source, window_candidates, max_pointers=VOLUNTEER_POOL, prior_context=prior,
                                suppression="slug-only", gate=gate) if window_candidates else []
        extras = volunteer(window_candidates, pool, [p.slug for p in pointers], len(window), fold_display=True)
        text = render_reflex_addition(render_pointer_block(pointers) if pointers else "", extras)
        return HookResult(0, text, gate.notice())

    return with_brain(env, work)


def handle(message: dict[str, object], env: Mapping[str, str]) -> HookResult:
    if message.get("hook_event_name") != "UserPromptSubmit":
        return HookResult()
    prompt = message.get("prompt")
    if not isinstance(prompt, str):
        return HookResult()
    messages = message.get("messages")
    prior = prior_from_messages(messages)
    if behaviour(env) == "0.46":
        result = pointer_block(env, prompt, prior, MAX_POINTERS)
    else:
        result = reflex_addition(env, prompt, prior, user_window(messages, prompt))
    return HookResult(0, context_output("UserPromptSubmit", result.stdout), result.stderr)


if __name__ == "__main__":
    main(handle)
