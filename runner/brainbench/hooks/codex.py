"""codex seam (contract): a static brain index at SessionStart, then at most one
pointer fragment per prompt.

There is no shipped gbrain Codex path; this is the harness-shaped contract of
spec §4.2.  Prior context is read from the Codex rollout at ``transcript_path``.
gbrain 0.60 labels the fragment's pointer (trust spec §5.4) and leaves the index as it
was: every live page of the source, quarantined ones too (a title and a slug, nothing of
their text), less external pages under ``trust.read_policy = filter``.
"""

from __future__ import annotations

from collections.abc import Mapping

from brainbench.brain import store
from brainbench.brain.eligibility import read_policy
from brainbench.hooks.brain_access import behaviour, with_brain
from brainbench.hooks.openclaw import pointer_block
from brainbench.hooks.program import HookResult, context_output, main
from brainbench.hooks.transcripts import parse_codex_rollout, read_confined
from brainbench.jsstring import trim

MAX_FRAGMENTS = 1
INDEX_HEADING = "## Brain index"
INDEX_LIMIT = 50


def brain_index(env: Mapping[str, str]) -> str:
    hidden = behaviour(env) != "0.46"

    def rows_of(conn, source):  # type: ignore[no-untyped-def]
        if not hidden:
            return store.index_rows(conn, source, INDEX_LIMIT)
        return store.index_rows(conn, source, INDEX_LIMIT, hide_external=read_policy(conn).hide_external)

    rows = with_brain(env, rows_of)
    if not rows:
        return ""
    return "\n".join([INDEX_HEADING, *(f"- {title} → `{slug}`" for slug, title in rows)])


def _prior(message: dict[str, object]) -> str | None:
    path = message.get("transcript_path")
    docs = read_confined(path if isinstance(path, str) else None, None)
    if docs is None:
        return None
    items = parse_codex_rollout(docs)
    # The index is session context, not something "mentioned" earlier, so it
    # must not suppress this turn's pointers.
    return "".join("\n" + i.text for i in items if not (i.role == "context" and i.text.startswith(INDEX_HEADING)))


def handle(message: dict[str, object], env: Mapping[str, str]) -> HookResult:
    event = message.get("hook_event_name")
    if event == "SessionStart":
        return HookResult(0, context_output("SessionStart", brain_index(env)))
    if event != "UserPromptSubmit":
        return HookResult()
    prompt = message.get("prompt")
    if not isinstance(prompt, str) or not trim(prompt):
        return HookResult()  # Codex never submits a blank prompt
    prior = _prior(message)
    if prior is None:
        return HookResult(0, "", "transcript_path is not a readable rollout; staying silent\n")
    result = pointer_block(env, prompt, prior, MAX_FRAGMENTS)
    return HookResult(0, context_output("UserPromptSubmit", result.stdout), result.stderr)


if __name__ == "__main__":
    main(handle)
