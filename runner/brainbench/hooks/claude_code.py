"""claude-code seam (production): gbrain's UserPromptSubmit hook, behaviourally (spec §4.3).

The window is the last 4 transcript turns plus the prompt; earlier injections
are recognised by their markers in the transcript's ``hook_additional_context``
attachments and suppress re-injection by slug.  gbrain 0.60 labels every page and
fact, applies activation control, and adds hot memory: the session's world-visible
facts (trust spec §5.4; always empty for the classic suites, whose facts are private).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from brainbench.brain import eligibility
from brainbench.hooks.brain_access import behaviour, with_brain
from brainbench.hooks.program import HookResult, main
from brainbench.hooks.transcripts import parse_claude_transcript, read_confined
from brainbench.jsjson import stringify
from brainbench.jsstring import js_len, trim, utf8_bytes
from brainbench.reflex.candidates import extract_candidates_from_window
from brainbench.reflex.render import (
    CONTEXT_MARKER,
    POINTER_HEADING,
    HotFactLine,
    Pointer,
    Volunteered,
    hot_fact_line,
    render_turn_context,
)
from brainbench.reflex.resolve import resolve_pointers
from brainbench.reflex.trust_gate import TrustGate
from brainbench.reflex.volunteer import volunteer

WINDOW_TURNS = 4
MAX_POINTERS = 3
MAX_VOLUNTEER_POOL = 10
PRIOR_BUDGET_BYTES = 32 * 1024
MAX_PAYLOAD_CHARS = 10_000
HOT_FACTS = 10


def dedupe_blocks(blocks: Sequence[str]) -> str | None:
    """Our earlier blocks, unique, newest kept first within 32 KiB, restored oldest→newest."""
    ours = [b for b in blocks if CONTEXT_MARKER in b or POINTER_HEADING in b]
    unique = list(dict.fromkeys(ours))
    kept: list[str] = []
    used = 0
    for block in reversed(unique):
        size = len(utf8_bytes(block)) + 2
        if used + size > PRIOR_BUDGET_BYTES:
            continue  # skip an oversize block, keep looking at older ones
        kept.append(block)
        used += size
    return "\n\n".join(reversed(kept)) if kept else None


def _projects_root(env: Mapping[str, str]) -> Path | None:
    config = env.get("CLAUDE_CONFIG_DIR")
    if config:
        return Path(config) / "projects"
    home = env.get("HOME")
    return Path(home) / ".claude" / "projects" if home else None


def _payload(block: str) -> str:
    def encode(text: str) -> str:
        return stringify({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})

    # Claude Code caps context at 10,000 characters: drop whole lines from the end until it fits.
    lines = block.split("\n")
    while lines and js_len(encode("\n".join(lines))) > MAX_PAYLOAD_CHARS:
        lines.pop()
    return encode("\n".join(lines)) + "\n" if lines else ""


def hot_memory(conn, source: str, session_id: str | None, gate: TrustGate,  # type: ignore[no-untyped-def]
               prior: str | None) -> tuple[list[HotFactLine], int]:
    """(the facts to show, how many activation control withheld): one per claim and entity, most
    confident first, at most 10, less those an earlier block of this session already showed."""
    seen: set[tuple[str, str | None]] = set()
    ranked = []
    for f in eligibility.hot_facts(conn, source, session_id, gate.policy):
        key = (" ".join(f.fact.lower().split()), f.entity_slug)
        if key not in seen:
            seen.add(key)
            ranked.append(f)
    ranked.sort(key=lambda f: -f.confidence)  # stable: newest first among equals
    shown: list[HotFactLine] = []
    withheld = 0
    for f in ranked:
        trust = gate.admit_fact(f.trust)
        if trust is None:
            withheld += 1
        elif len(shown) < HOT_FACTS:
            shown.append(HotFactLine(f.fact, f.entity_slug, f.confidence, trust))
    if prior:
        # Matched without its label and confidence: a fact shown before stays shown once.
        shown = [f for f in shown if hot_fact_line(f, labeled=False)[2:].rsplit(" (", 1)[0] + " (" not in prior]
    return shown, withheld


def turn_context(env: Mapping[str, str], window: list[tuple[str, str]], prior: str | None,
                 session_id: str | None = None) -> HookResult:
    candidates = extract_candidates_from_window(window)
    labeled = behaviour(env) != "0.46"
    if not candidates and not labeled:
        return HookResult()

    def assemble(conn, source) -> HookResult:  # type: ignore[no-untyped-def]
        gate = TrustGate.read(conn) if labeled else None
        pointers: list[Pointer] = []
        extras: list[Volunteered] = []
        if candidates:
            pointers = resolve_pointers(conn, source, candidates, max_pointers=MAX_POINTERS,
                                        prior_context=prior, suppression="slug-only", gate=gate)
            pool = resolve_pointers(conn, source, candidates, max_pointers=MAX_VOLUNTEER_POOL,
                                    prior_context=prior, suppression="slug-only", gate=gate)
            extras = volunteer(candidates, pool, [p.slug for p in pointers], len(window), fold_display=labeled)
        if gate is None:
            return HookResult(0, render_turn_context(pointers, extras))
        facts, withheld_facts = hot_memory(conn, source, session_id, gate, prior)
        return HookResult(0, render_turn_context(pointers, extras, facts), gate.notice(withheld_facts))

    return with_brain(env, assemble)


def handle(message: dict[str, object], env: Mapping[str, str]) -> HookResult:
    if message.get("hook_event_name", "UserPromptSubmit") != "UserPromptSubmit":
        return HookResult()
    if env.get("GBRAIN_HOOKS") == "0":
        return HookResult()
    prompt = message.get("prompt")
    prompt = prompt if isinstance(prompt, str) else ""
    path = message.get("transcript_path")
    docs = read_confined(path if isinstance(path, str) else None, _projects_root(env))
    if docs is None:
        return HookResult(0, "", "transcript_path rejected (not a confined .jsonl file); staying silent\n")
    turns, blocks = parse_claude_transcript(docs)
    window = [(t.role, t.text) for t in turns[-WINDOW_TURNS:]]
    if trim(prompt):
        window.append(("user", prompt))
    if not window:
        return HookResult()
    session = message.get("session_id")
    result = turn_context(env, window, dedupe_blocks(blocks), session if isinstance(session, str) else None)
    return HookResult(0, _payload(result.stdout) if result.stdout else "", result.stderr)


if __name__ == "__main__":
    main(handle)
